<?php
// A search program for goldeneval.command, in PHP: ranks the Markdown files of a folder by how
// many distinct terms of the question each holds (ties by id), the ranking that
// tests/search_programs/overlap.py gives in Python.
//
//   php search.php CORPUS_FOLDER
//
// One JSON line in per question ({"id", "question", "limit"}), one JSON line out ({"id", "ids"}),
// until standard input closes.  For the tests it can misbehave once (SEARCH_FAULT=exit|kill at
// its SEARCH_FAULT_AT-th question, unless the file SEARCH_FAULT_MARKER exists, which it then
// creates) and append its process id to the file SEARCH_PIDS.

const STOP_WORDS = ["a", "an", "and", "are", "at", "be", "by", "can", "do", "does", "for", "how", "i", "in",
    "is", "it", "my", "of", "on", "or", "the", "to", "what", "when", "with"];

function terms(string $text): array {
    $words = preg_split('/[^a-z0-9]+/', strtolower($text), -1, PREG_SPLIT_NO_EMPTY);
    return array_diff(array_unique($words), STOP_WORDS);
}

$folder = rtrim($argv[1] ?? '', '/');
if ($folder === '' || !is_dir($folder)) {
    fwrite(STDERR, "usage: php search.php CORPUS_FOLDER\n");
    exit(2);
}
$documents = [];
$files = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($folder, FilesystemIterator::SKIP_DOTS));
foreach ($files as $file) {
    if ($file->getExtension() === 'md') {
        $id = substr($file->getPathname(), strlen($folder) + 1, -strlen('.md'));
        $documents[$id] = array_flip(terms(file_get_contents($file->getPathname())));
    }
}
ksort($documents, SORT_STRING);

$pids = getenv('SEARCH_PIDS');
if ($pids) {
    file_put_contents($pids, getmypid() . "\n", FILE_APPEND | LOCK_EX);
}
fwrite(STDERR, "search.php: " . count($documents) . " documents\n");

$asked = 0;
while (($line = fgets(STDIN)) !== false) {
    $asked++;
    $request = json_decode($line, true);
    $marker = getenv('SEARCH_FAULT_MARKER');
    if ($asked === (int) getenv('SEARCH_FAULT_AT') && $marker && !file_exists($marker)) {
        touch($marker);
        if (getenv('SEARCH_FAULT') === 'kill') {
            posix_kill(getmypid(), 9);
        }
        exit(3);
    }
    $query = terms($request['question']);
    $scores = [];
    foreach ($documents as $id => $words) {
        $score = 0;
        foreach ($query as $term) {
            $score += isset($words[$term]) ? 1 : 0;
        }
        if ($score > 0) {
            $scores[] = [$score, (string) $id];
        }
    }
    usort($scores, fn($a, $b) => $b[0] <=> $a[0] ?: strcmp($a[1], $b[1]));
    $ids = array_map(fn($pair) => $pair[1], array_slice($scores, 0, $request['limit']));
    fwrite(STDOUT, json_encode(['id' => $request['id'], 'ids' => $ids]) . "\n");
    fflush(STDOUT);
}
