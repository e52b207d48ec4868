# toolsmith spare (any interpreter): a shell started inside the tool's sandbox before any call
# writes "r" on its channel (descriptor 9), reads one line on stdin (the call's entry path),
# writes "g" and replaces itself with the interpreter on the entry: the sandbox is already set
# up, the interpreter starts afresh (`read` takes one line, leaving the call's input that may
# follow). The interpreter does not get the channel: its exit status comes from the process.
# Arguments: the interpreter command.
printf r >&9
IFS= read -r toolsmith_entry || exit 0
printf g >&9
exec "$@" "$toolsmith_entry" 9>&-
