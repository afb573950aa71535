/**
 * Opening a trace file without knowing its format: {@link io.devalloc.trace.detect.TraceFormats#detect} tells the
 * format from the file's first bytes (and a zip's single entry), {@link io.devalloc.trace.detect.TraceFormats#open}
 * opens the reader of that format. Apart from the vocabulary in {@code io.devalloc.trace} so that the format
 * packages never depend on each other through it.
 */
package io.devalloc.trace.detect;
