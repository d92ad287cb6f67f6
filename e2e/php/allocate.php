<?php
// Allocates strings of known sizes from known functions; prints what it allocated.
// Usage: php allocate.php <megabytes per function> [keep]
// "keep": the strings of keep_in_global() stay referenced by a global until the end.

class StringFactory {
    public function large(int $total): int {
        $made = 0;
        for ($i = 0; $made < $total; $i++) {
            $s = str_repeat('b', 40000);   // a large ZendMM run
            $made += 40000;
        }
        return $made;
    }
}

function small_strings(int $total): int {
    $made = 0;
    for ($i = 0; $made < $total; $i++) {
        $s = str_repeat('a', 200 + ($i & 7));  // small bins
        $made += 200 + ($i & 7);
    }
    return $made;
}

$kept = [];

function keep_in_global(int $total): int {
    global $kept;
    $made = 0;
    while ($made < $total) {
        $kept[] = str_repeat('k', 100000);
        $made += 100000;
    }
    return $made;
}

$huge = function (int $total): int {
    $made = 0;
    while ($made < $total) {
        $s = str_repeat('h', 3 << 20);  // huge blocks (over 2 MiB)
        $made += 3 << 20;
    }
    return $made;
};

$mb = (int)($argv[1] ?? 25) << 20;
$factory = new StringFactory();
printf("small_strings %d\n", small_strings($mb));
printf("StringFactory::large %d\n", $factory->large($mb));
printf("{closure} %d\n", $huge($mb));
if (($argv[2] ?? '') === 'keep') printf("keep_in_global %d\n", keep_in_global($mb));
