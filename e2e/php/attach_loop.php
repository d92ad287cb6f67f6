<?php
// A PHP CLI process for nmprof attach: churns strings in churn_strings() until the
// file named by its argument exists, then prints the total it computed.
function churn_strings(int $n): int {
    $total = 0;
    for ($i = 0; $i < $n; $i++) {
        $s = str_repeat('a', 200 + ($i & 7));
        $total += strlen($s);
    }
    return $total;
}

echo "ready\n";
$rounds = 0;
while (!file_exists($argv[1])) {
    if (churn_strings(20000) !== 20000 * 200 + 2500 * 28) {
        echo "wrong\n";
        exit(1);
    }
    $rounds++;
    clearstatcache();
}
echo "ok $rounds\n";
