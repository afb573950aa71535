/** The {@code advise} command, registered by the launcher next to {@code replay} and {@code compare}. */
package io.devalloc.advisor.cli;
