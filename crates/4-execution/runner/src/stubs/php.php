// toolsmith spare (PHP): started inside the tool's sandbox before any call, it has loaded
// nothing of the tool's. It writes "r" on its channel (descriptor 9) once up, reads one line
// on stdin (the call's entry path), writes "g", closes the channel (PHP cannot tell its exit
// status: that comes from the process) and includes the entry, as `php ENTRY` would. PHP
// reads stdin in blocks, so the host writes the call's input only after the "g".
$toolsmith_channel = fopen('php://fd/9', 'w');
fwrite($toolsmith_channel, 'r');
$toolsmith_line = fgets(STDIN);
if ($toolsmith_line === false) exit(0);
fwrite($toolsmith_channel, 'g');
fclose($toolsmith_channel);
unset($toolsmith_channel);
$argv = [rtrim($toolsmith_line, "\n")];
$argc = 1;
$_SERVER['argv'] = $argv;
$_SERVER['argc'] = 1;
unset($toolsmith_line);
include $argv[0];
