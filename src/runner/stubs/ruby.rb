# toolsmith spare (Ruby): started inside the tool's sandbox before any call, it has loaded
# nothing of the tool's (only the json library, as if the tool had required it first). It
# writes "r" on its channel (descriptor 9, not inherited) once up, reads one line on stdin (the
# call's entry path), writes "g" and loads the entry as the main script ($0), as `ruby ENTRY`
# would; its exit status goes on the channel too ("x<status>"), unless a signal ends it.
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
# Registered first, so it runs last: the status is final by then.
at_exit do
  e = $!
  code = case e
         when nil then 0
         when SystemExit then e.status
         when SignalException then nil
         else 1
         end
  toolsmith_channel.syswrite("x#{code}\n") if code
rescue StandardError
  nil
end
ARGV.clear
$0 = line.chomp
line = nil
load($0)
