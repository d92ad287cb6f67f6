<?php
// A request loop closer to an application than churn.php: a JSON payload decoded,
// validated and reshaped, a template with escaping and loops rendered, the result
// encoded again. Less of its time is allocation. Prints the CPU seconds its loop
// took (the last word of its output), as churn.php does.
// Usage: php pages.php <requests>

function payload(int $n): string {
    $items = [];
    for ($i = 0; $i < 40; $i++) {
        $items[] = ["sku" => sprintf("SKU-%05d", $n * 40 + $i), "title" => "Item <$i> & co", "price" => $i * 1.25,
                    "qty" => $i % 5, "tags" => ["a" . ($i % 3), "b" . ($i % 4)]];
    }
    return json_encode(["order" => $n, "customer" => ["name" => "Customer $n", "email" => "c$n@example.com"],
                        "items" => $items]);
}

function render(string $template, array $vars): string {
    return preg_replace_callback('/\{\{\s*(\w+)\s*\}\}/', fn($m) => htmlspecialchars((string)($vars[$m[1]] ?? "")),
                                 $template);
}

function handle_request(string $body): string {
    $order = json_decode($body, true);
    $rows = [];
    $total = 0.0;
    foreach ($order["items"] as $item) {
        if ($item["qty"] === 0) continue;
        $line = $item["price"] * $item["qty"];
        $total += $line;
        $rows[] = render("<tr><td>{{sku}}</td><td>{{title}}</td><td>{{qty}}</td><td>{{line}}</td></tr>",
                         ["sku" => $item["sku"], "title" => $item["title"], "qty" => $item["qty"],
                          "line" => number_format($line, 2)]);
    }
    $page = render("<h1>{{name}}</h1><table>{{rows}}</table><p>{{total}}</p>",
                   ["name" => $order["customer"]["name"], "rows" => "", "total" => number_format($total, 2)]);
    $page = str_replace("<table></table>", "<table>" . implode("\n", $rows) . "</table>", $page);
    return json_encode(["html" => $page, "count" => count($rows), "total" => $total]);
}

function cpu_seconds(): float {
    $u = getrusage();
    return $u["ru_utime.tv_sec"] + $u["ru_utime.tv_usec"] / 1e6 + $u["ru_stime.tv_sec"] + $u["ru_stime.tv_usec"] / 1e6;
}

$requests = (int)($argv[1] ?? 2000);
$start = cpu_seconds();
$bytes = 0;
for ($n = 0; $n < $requests; $n++) $bytes += strlen(handle_request(payload($n)));
printf("%d bytes %.4f\n", $bytes, cpu_seconds() - $start);
