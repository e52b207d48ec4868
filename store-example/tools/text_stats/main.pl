#!/usr/bin/env perl
# text_stats: count the sentences of a text and the average length of its words.
#
# toolsmith script tool, protocol = "plain": the JSON arguments arrive on stdin, the JSON result
# is printed on stdout, errors go to stderr with exit code 1. JSON::PP is core Perl.
#
# - a sentence is a stretch of text ending with one or more of . ! ? (or with the end of the
#   text) that contains at least one letter or digit: "Wait... what?!" is 2 sentences;
# - a word is a run of Unicode letters, digits, apostrophes or hyphens that contains a letter
#   or digit ("don't" and "well-known" are single words, punctuation is not counted);
# - avg_word_length is the mean number of characters per word, rounded to 2 decimals
#   (0 when there are no words).
use strict;
use warnings;
use JSON::PP;

sub stats {
    my ($text) = @_;
    my $sentences = grep { /[\p{L}\p{N}]/ } split /[.!?]+/, $text;
    my @words = grep { /[\p{L}\p{N}]/ } $text =~ /[\p{L}\p{N}'\x{2019}-]+/g;
    my $letters = 0;
    $letters += length for @words;
    my $avg = @words ? sprintf('%.2f', $letters / @words) : 0;
    return { sentences => $sentences + 0, avg_word_length => $avg + 0 };
}

my $json  = JSON::PP->new->utf8->canonical;    # utf8: stdin/stdout carry UTF-8 bytes
my $input = do { local $/; <STDIN> };
my $args  = eval { $json->decode(defined $input && $input =~ /\S/ ? $input : '{}') };
if (ref $args ne 'HASH') { print STDERR "invalid JSON arguments: ", ($@ || "not an object\n"); exit 1; }
my $text = $args->{text};
if (!defined $text || ref $text) { print STDERR "missing string argument `text`\n"; exit 1; }
print $json->encode(stats($text)), "\n";
