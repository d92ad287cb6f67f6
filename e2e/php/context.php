<?php
// Requests with a context (nmprof_context_set and friends, added by the agent):
// each request of a route makes strings of a known size, and some strings are
// made between requests, with no context. Prints, per route, the bytes asked of
// ZendMM in its requests and how many blocks; and per span the same.
// Runs unchanged without the agent (the functions are then not there).
$profiled = function_exists('nmprof_context_set');
$one = (int)(microtime(true) > 0);  // 1, known only when run: OPcache cannot fold the strings away
$routes = ['/checkout' => [400, 60000], '/search' => [300, 20000], '/home' => [200, 15000]];
$truth = [];
$between = 0;
for ($request = 1; $request <= 30; $request++) {
    $route = array_keys($routes)[$request % 3];
    [$strings, $length] = $routes[$route];
    if ($profiled) {
        nmprof_context_set($request, 1000 + $request);
        nmprof_context_set_attribute('route', $route);
        nmprof_context_set_attribute('undeclared', 'x');
    }
    for ($i = 0; $i < $strings / 10; $i++) $s = str_repeat('c', $length - 1 + $one);
    $block = (24 + $length + 1 + 7) & ~7;
    $truth[$route][0] = ($truth[$route][0] ?? 0) + $block * intdiv($strings, 10);
    $truth[$route][1] = ($truth[$route][1] ?? 0) + intdiv($strings, 10);
    if ($profiled) {
        nmprof_context_set_attribute('route', null);
        nmprof_context_clear();
    }
    for ($i = 0; $i < 20; $i++) $s = str_repeat('n', 29999 + $one);  // no context
    $between += 20;
}
foreach ($truth as $route => [$bytes, $count]) echo "$route $bytes $count\n";
echo "(none) ", $between * ((24 + 30000 + 1 + 7) & ~7), " $between\n";
