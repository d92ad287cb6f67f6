<?php
// Allocates strings from known functions and prints, per function, the bytes it
// asked ZendMM for (a string of n characters is one block of 24 + n + 1 bytes,
// rounded up to 8) and how many blocks. The loops' lines are what the tests expect.
// Usage: php allocate.php <MiB per function> [keep]
// "keep": keep_in_global()'s strings stay referenced by a global until the end.

function string_block(int $length): int { return (24 + $length + 1 + 7) & ~7; }

class StringFactory {
    public function large(int $total): array {
        $bytes = 0;
        for ($n = 0; $bytes < $total; $n++) {
            $s = str_repeat('b', 40000);  // a large run of pages
            $bytes += string_block(40000);
        }
        return [$bytes, $n];
    }
}

function small_strings(int $total): array {
    $bytes = 0;
    for ($n = 0; $bytes < $total; $n++) {
        $s = str_repeat('a', 200 + ($n & 7));  // small bins
        $bytes += string_block(200 + ($n & 7));
    }
    return [$bytes, $n];
}

$kept = [];

function keep_in_global(int $total): array {
    global $kept;
    $bytes = 0;
    for ($n = 0; $bytes < $total; $n++) {
        $kept[] = str_repeat('k', 100000);
        $bytes += string_block(100000);
    }
    return [$bytes, $n];
}

$huge = function (int $total): array {
    $bytes = 0;
    for ($n = 0; $bytes < $total; $n++) {
        $s = str_repeat('h', 3 << 20);  // huge blocks, mapped on their own
        $bytes += string_block(3 << 20);
    }
    return [$bytes, $n];
};

$total = (int)($argv[1] ?? 25) << 20;
$factory = new StringFactory();
printf("small_strings %d %d\n", ...small_strings($total));
printf("StringFactory::large %d %d\n", ...$factory->large($total));
printf("{closure} %d %d\n", ...$huge($total));
if (($argv[2] ?? '') === 'keep') printf("keep_in_global %d %d\n", ...keep_in_global($total));
