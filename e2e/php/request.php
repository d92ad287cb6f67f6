<?php
// One request of the server tests: request_strings() keeps 50 strings of 100,000
// characters (one block of 100,032 bytes each) until the request ends; the answer
// is the pid of the process that served it and how many strings it made.
function request_strings(int $count): int {
    $kept = [];
    for ($i = 0; $i < $count; $i++) $kept[] = str_repeat('r', 100000);
    return count($kept);
}
echo getmypid(), " ", request_strings(50), "\n";
