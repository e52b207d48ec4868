# toolsmith spare, before its stub: $1 is the descriptor of the call's stdout, a pipe only the
# tool's processes hold. The process's own stdout (which a sandbox's outer processes hold as
# well) becomes descriptor 9, the stub's channel to the host; the call's stdout becomes 1.
# Then the stub replaces this shell.
toolsmith_fd=$1
shift
eval "exec 9>&1 1>&$toolsmith_fd $toolsmith_fd>&-"
exec "$@"
