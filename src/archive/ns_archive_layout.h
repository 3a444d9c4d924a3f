/* ns_archive_layout: the members of a normsweep reproducibility archive, below its top directory
 * (what `archive` writes, `verify` reads and README.txt describes; docs/ARCHIVE.md). */
#ifndef NS_ARCHIVE_LAYOUT_H
#define NS_ARCHIVE_LAYOUT_H

#define NS_ARCHIVE_FORMAT "normsweep-archive-3"
#define NS_ARCHIVE_FORMAT_2 "normsweep-archive-2"
#define NS_ARCHIVE_FORMAT_1 "normsweep-archive-1"
#define NS_ARCHIVE_README "README.txt"
#define NS_ARCHIVE_PROVENANCE "provenance.json"
#define NS_ARCHIVE_SWEEP "sweep.yaml"
#define NS_ARCHIVE_ASSETS "assets-manifest.json"
#define NS_ARCHIVE_CKPT_DIR "checkpoint"
#define NS_ARCHIVE_LOG_DIR "logs"
#define NS_ARCHIVE_REPORT_DIR "report"

#endif
