/**
 * The advisor's reports: the terminal table ({@link io.devalloc.advisor.report.AdviceText}), the JSON object with its
 * documented schema ({@link io.devalloc.advisor.report.AdviceJson}, docs/advisor.md) and the self-contained HTML
 * page ({@link io.devalloc.advisor.report.AdviceHtml}), which reuses the replay report's charts and segment maps.
 */
package io.devalloc.advisor.report;
