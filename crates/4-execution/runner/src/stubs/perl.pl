# toolsmith spare (Perl): started inside the tool's sandbox before any call, it has loaded
# nothing of the tool's (only JSON::PP, as if the tool had used it first). It writes "r" on its
# channel (descriptor 9, not inherited) once up, reads one line on stdin (the call's entry
# path), writes "g" and runs the entry file, as `perl ENTRY` would.
require JSON::PP;
use Fcntl ();
open(my $toolsmith_channel, '>&=', 9) or exit 70;
fcntl($toolsmith_channel, Fcntl::F_SETFD(), Fcntl::FD_CLOEXEC());
syswrite($toolsmith_channel, 'r');
# Byte by byte (unbuffered): the call's input may follow the line at once.
my $line = '';
while (sysread(STDIN, my $c, 1)) { $line .= $c; last if $c eq "\n"; }
exit 0 unless $line =~ /\n\z/;
syswrite($toolsmith_channel, 'g');
# No status on the channel: global destruction (an unclosed handle's flush among it) runs after
# every END block, and the call must not end before it has.
close($toolsmith_channel);
chomp $line;
@ARGV = ();
$0 = $line;
undef $line;
unless (-f $0) { print STDERR "Can't open perl script \"$0\": No such file or directory\n"; exit 2; }
$@ = '';
do $0;
if ($@) { print STDERR $@; exit(($! + 0) || 255); }
exit 0;
