# toolsmith spare (Ruby): started inside the tool's sandbox before any call, it has loaded
# nothing of the tool's (only the json library, as if the tool had required it first). It
# writes "r" on stdout once up, reads one line on stdin (the call's entry path), writes "g"
# and loads the entry as the main script ($0), as `ruby ENTRY` would.
require 'json'
$stdout.syswrite('r')
line = $stdin.gets or exit!(0)
$stdout.syswrite('g')
ARGV.clear
$0 = line.chomp
line = nil
load($0)
