<?php
// Top-level code of a required file: its frame is named after how it was entered.
$included = [];
for ($n = 0; $n < 200; $n++) {
    $included[] = str_repeat('i', 100000);
}
