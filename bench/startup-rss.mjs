// `node --import <this file>`: at exit, writes the process's peak resident set size (KiB, from
// getrusage via process.resourceUsage().maxRSS) to the file named by SB_MAXRSS_FILE.
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  if (process.env.SB_MAXRSS_FILE) writeFileSync(process.env.SB_MAXRSS_FILE, String(process.resourceUsage().maxRSS));
});
