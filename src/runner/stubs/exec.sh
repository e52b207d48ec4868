# toolsmith spare (any interpreter): a shell started inside the tool's sandbox before any call
# writes "r" on stdout, reads one line on stdin (the call's entry path), writes "g" and
# replaces itself with the interpreter on the entry: the sandbox is already set up, the
# interpreter starts afresh (`read` takes one line, leaving the call's input that may follow).
# Arguments: the interpreter command.
printf r
IFS= read -r toolsmith_entry || exit 0
printf g
exec "$@" "$toolsmith_entry"
