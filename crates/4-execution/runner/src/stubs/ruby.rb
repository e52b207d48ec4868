# toolsmith spare (Ruby): started inside the tool's sandbox before any call, it has loaded
# nothing of the tool's (only the json library, as if the tool had required it first). It
# writes "r" on its channel (descriptor 9, not inherited) once up, reads one line on stdin (the
# call's entry path), writes "g" and loads the entry as the main script ($0), as `ruby ENTRY`
# would.
require 'json'
toolsmith_channel = IO.for_fd(9, autoclose: true)
toolsmith_channel.close_on_exec = true
toolsmith_channel.syswrite('r')
line = +''
# Byte by byte (unbuffered): the call's input may follow the line at once.
while (c = ($stdin.sysread(1) rescue nil))
  line << c
  break if c == "\n"
end
exit!(0) unless line.end_with?("\n")
toolsmith_channel.syswrite('g')
# No status on the channel: finalizers (an unclosed File's flush among them) run after every
# at_exit handler, and the call must not end before they have.
toolsmith_channel.close
ARGV.clear
$0 = line.chomp
line = nil
load($0)
