/**
 * The visual report of trace replays: {@link io.devalloc.replay.report.HtmlReport} turns a list of
 * {@link io.devalloc.replay.ReplayResult}s into one self-contained HTML page, which opens without network
 * access (inline style sheet and SVG, no script, no fonts, images or links to fetch).
 *
 * <p>The page shows, for each trace, allocated and reserved bytes over the events of the replay for every allocator
 * set-up (one colour per set-up, the same colour everywhere on the page); the comparison table with the best figure
 * of each column marked among the replays of the same trace; and, for each result, the segment map at the reserved
 * peak, blocks coloured by state, all maps at one scale and sub-pixel blocks merged so that maps of any number of
 * blocks stay small. Hover titles carry the exact figures.
 *
 * <p>The parts are package-private: {@code MemoryChart}, {@code ComparisonTable} and {@code SegmentMap} each write
 * their own markup, {@code Series} gives each set-up its label and colour, and {@code Markup} escapes every string
 * from the results and formats every number with the root locale, so that the same results always give the same
 * page.
 */
package io.devalloc.replay.report;
