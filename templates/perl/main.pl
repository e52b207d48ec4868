#!/usr/bin/env perl
# {{name}}: {{description}}
#
# Calling convention (toolsmith, kind = "script", protocol = "plain"):
# - the arguments arrive as ONE JSON document on stdin (an object matching input_schema);
# - print the result on stdout: valid JSON becomes structured output (it should match
#   output_schema), anything else is returned as text;
# - stderr lines become log messages; exit non-zero to report an error (its message is stderr).
# JSON::PP is part of core Perl (5.14+), so no CPAN module is needed.
use strict;
use warnings;
use JSON::PP;

sub run {
    my ($args) = @_;
    my $text = $args->{text};
    die "missing string argument `text`\n" unless defined $text && !ref $text;
    return { message => "Hello, $text!" };
}

my $json  = JSON::PP->new->utf8->canonical;    # utf8: stdin/stdout carry UTF-8 bytes
my $input = do { local $/; <STDIN> };
my $args  = eval { $json->decode(defined $input && $input =~ /\S/ ? $input : '{}') };
if (!defined $args) { print STDERR "invalid JSON arguments: $@"; exit 1; }
my $result = eval { run($args) };
if (!defined $result) { print STDERR $@; exit 1; }
print $json->encode($result), "\n";
