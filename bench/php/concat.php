<?php
// A string grown by `.=`, 100 bytes at a time, to ITERATIONS * 100 bytes: one
// erealloc per iteration (bench/php_concat.py).
$iterations = (int)($argv[1] ?? 400000);
$piece = str_repeat('x', 100);
$out = '';
for ($i = 0; $i < $iterations; $i++) $out .= $piece;
echo strlen($out), "\n";
