// toolsmith spare (PHP): started inside the tool's sandbox before any call, it has loaded
// nothing of the tool's. It writes "r" on stdout once up, reads one line on stdin (the call's
// entry path), writes "g" and includes the entry, as `php ENTRY` would. PHP reads stdin in
// blocks, so the host writes the call's input only after the "g".
fwrite(STDOUT, 'r');
$toolsmith_line = fgets(STDIN);
if ($toolsmith_line === false) exit(0);
fwrite(STDOUT, 'g');
$argv = [rtrim($toolsmith_line, "\n")];
$argc = 1;
$_SERVER['argv'] = $argv;
$_SERVER['argc'] = 1;
unset($toolsmith_line);
include $argv[0];
