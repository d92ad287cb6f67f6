<?php
// ZendMM churn for nmprof's overhead benchmark: string building, array growth and
// a framework-like request loop (objects, arrays of rows, templates rendered into
// strings). Prints the CPU seconds its loop took (the last word of its output):
// on a shared machine, wall time mostly measures the neighbours.
// Usage: php churn.php <requests>

final class Row {
    public function __construct(public int $id, public string $name, public array $tags) {}
}

function load_rows(int $count, int $seed): array {
    $rows = [];
    for ($i = 0; $i < $count; $i++) {
        $rows[] = new Row($i, "user-" . ($seed + $i), ["t" . ($i % 7), "g" . ($i % 3)]);
    }
    return $rows;
}

function render(array $rows): string {
    $html = "";
    foreach ($rows as $row) {
        $html .= sprintf("<tr><td>%d</td><td>%s</td><td>%s</td></tr>\n", $row->id, htmlspecialchars($row->name),
                         implode(",", $row->tags));
    }
    return $html;
}

function handle_request(int $n): int {
    $rows = load_rows(200, $n);
    $index = [];
    foreach ($rows as $row) $index[$row->name] = $row;
    $page = str_replace("{body}", render($rows), "<html><body><table>{body}</table></body></html>");
    $json = json_encode(array_map(fn(Row $r) => ["id" => $r->id, "name" => $r->name], $rows));
    return strlen($page) + strlen($json) + count($index);
}

$requests = (int)($argv[1] ?? 2000);
function cpu_seconds(): float {
    $u = getrusage();
    return $u["ru_utime.tv_sec"] + $u["ru_utime.tv_usec"] / 1e6 + $u["ru_stime.tv_sec"] + $u["ru_stime.tv_usec"] / 1e6;
}

$start = cpu_seconds();
$total = 0;
for ($n = 0; $n < $requests; $n++) $total += handle_request($n);
printf("%d bytes %.4f\n", $total, cpu_seconds() - $start);
