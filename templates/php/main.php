<?php
// {{name}}: {{description}}
//
// Calling convention (toolsmith, kind = "script", protocol = "plain"):
// - the arguments arrive as ONE JSON document on stdin (an object matching input_schema);
// - print the result on stdout: valid JSON becomes structured output (it should match
//   output_schema), anything else is returned as text;
// - stderr lines become log messages; exit non-zero to report an error (its message is stderr).

function run(array $args): array
{
    if (!isset($args['text']) || !is_string($args['text'])) {
        throw new InvalidArgumentException('missing string argument `text`');
    }
    return ['message' => "Hello, {$args['text']}!"];
}

$input = stream_get_contents(STDIN);
$args = trim($input) === '' ? [] : json_decode($input, true);
if (!is_array($args)) {
    fwrite(STDERR, 'invalid JSON arguments: ' . json_last_error_msg() . "\n");
    exit(1);
}
try {
    $result = run($args);
} catch (Throwable $e) {
    fwrite(STDERR, $e->getMessage() . "\n");
    exit(1);
}
// JSON_FORCE_OBJECT is not used so lists stay lists; an empty result array would print as [].
echo json_encode($result, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES), "\n";
