// Pure formatting helpers shared by the pages: numbers, bytes, durations, times, paths.
// No DOM here, so every function is unit-tested under plain Node.

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** "1.5 MiB" for 1572864; "—" for null/undefined. */
export function formatBytes(bytes) {
  if (bytes === null || bytes === undefined || Number.isNaN(Number(bytes))) return '—';
  let value = Number(bytes);
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${value} B`;
  return `${value.toFixed(value < 10 ? 1 : 0)} ${BYTE_UNITS[unit]}`;
}

// One formatter for every count: Number.toLocaleString makes its own at each call (50 ms for
// the labels of a 500-stage application's opening, under load).
const COUNTS = new Intl.NumberFormat('en-US');

/** "1,234,567"; "—" for null/undefined. */
export function formatCount(count) {
  if (count === null || count === undefined || Number.isNaN(Number(count))) return '—';
  return COUNTS.format(Number(count));
}

/** "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min"; "—" for null/undefined. */
export function formatDuration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(Number(ms))) return '—';
  const value = Number(ms);
  if (value < 1000) return `${Math.round(value)} ms`;
  const seconds = value / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`;
  const totalSeconds = Math.round(seconds);
  const minutes = Math.floor(totalSeconds / 60);
  if (minutes < 60) return `${minutes} min ${String(totalSeconds % 60).padStart(2, '0')} s`;
  const hours = Math.floor(minutes / 60);
  return `${hours} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** "2025-11-21 18:10:00 UTC" from an ISO 8601 string; "—" for null/empty; the input if unparseable. */
export function formatTime(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** Last path segment of a URI or path ("hdfs://nn/data/words.txt" -> "words.txt"); table names unchanged. */
export function baseName(path) {
  if (!path) return '';
  const trimmed = String(path).replace(/\/+$/, '');
  const slash = trimmed.lastIndexOf('/');
  return slash >= 0 && slash < trimmed.length - 1 ? trimmed.slice(slash + 1) : trimmed;
}

/** Shorten to at most `max` characters with an ellipsis in the middle (keeps both ends readable). */
export function shorten(text, max = 40) {
  const value = String(text ?? '');
  if (value.length <= max) return value;
  const head = Math.ceil((max - 1) / 2);
  const tail = Math.floor((max - 1) / 2);
  return `${value.slice(0, head)}…${value.slice(value.length - tail)}`;
}

const PARTITION_BITS = 2 ** 32;

/**
 * Where a record is, as people think of it: {partition, row} of its id (the high 32 bits the
 * partition, or input split or file; the low bits its position there), or the API's own
 * `partition`/`position` fields when the record has them. Null when the id is not a whole number.
 */
export function recordPlace(record) {
  if (Number.isInteger(record?.partition) && Number.isInteger(record?.position)) {
    return { partition: record.partition, row: record.position };
  }
  const id = record?.record_id;
  if (!Number.isSafeInteger(id) || id < 0) return null;
  return { partition: Math.floor(id / PARTITION_BITS), row: id % PARTITION_BITS };
}

/**
 * A record id as a table cell: {text: "partition 3 · row 17", title: "record id 12884901905"}
 * (the raw id, as the API gives it, in the tooltip); the id as it is when it has no place.
 */
export function recordIdCell(record) {
  const place = recordPlace(record);
  const raw = record?.record_id === null || record?.record_id === undefined ? '—' : String(record.record_id);
  if (!place) return { text: raw, title: '' };
  return { text: `partition ${place.partition} · row ${formatCount(place.row)}`, title: `record id ${raw}` };
}

/** Call sites with their file's name only: "reduceByKey at /home/ana/job.py:58" -> "reduceByKey at job.py:58". */
export function shortCallSites(text) {
  return String(text ?? '').replace(/ at (?:[A-Za-z]:)?(?:[^\s:]*[/\\])([^/\\\s]+:\d+)/g, ' at $1');
}
