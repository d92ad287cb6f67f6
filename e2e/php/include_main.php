<?php
require __DIR__ . '/included.php';
printf("%d\n", count($included));
