# toolsmith spare (Bash): bash itself, started inside the tool's sandbox before any call, has
# read nothing of the tool's. It writes "r" on its channel (descriptor 9, moved out of the
# tool's way), reads one line on stdin (the call's entry path; `read` takes that line only,
# leaving the call's input that may follow), writes "g" and runs the entry in this fresh shell
# as `bash ENTRY` would: $0 and BASH_SOURCE are the entry, no positional parameters, its exit
# status is the process's — also written on the channel ("x<status>") as the shell exits.
exec {toolsmith_channel}>&9 9>&-
printf r >&"$toolsmith_channel"
IFS= read -r toolsmith_entry || exit 0
printf g >&"$toolsmith_channel"
# The tool is over: its stdout ends here (not when this shell is gone), then its status.
trap 'toolsmith_status=$?; exec 1>&-; printf "x%d\n" "$toolsmith_status" >&"$toolsmith_channel"' EXIT
BASH_ARGV0=$toolsmith_entry
set --
. "$toolsmith_entry"
