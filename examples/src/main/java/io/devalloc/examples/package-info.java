/**
 * The {@code devalloc} launcher and small programs that show the ways into devalloc.
 *
 * <ul>
 *   <li>{@link io.devalloc.examples.Launcher}: the command line that {@code ./devalloc} runs ({@code devices},
 *       {@code demo}, {@code replay}, {@code compare}); new subcommands are added to its list of subcommands. Its
 *       {@code --device}, {@code --allocator} and {@code --config} options default to the {@code devalloc.*}
 *       properties and {@code DEVALLOC_*} variables ({@link io.devalloc.examples.SettingsDefaults}).</li>
 *   <li>The {@code replay} and {@code compare} commands come from module {@code replay}
 *       ({@link io.devalloc.replay.cli}), which replays traces that module {@code trace-io} reads; the launcher,
 *       the composition root, registers them.</li>
 *   <li>{@link io.devalloc.replay.TrainingLoopWorkload}: a seeded, deterministic allocation pattern of a
 *       training loop, reused by the demo, the tests and benchmarks.</li>
 *   <li>{@link io.devalloc.examples.PlainApiExample}, {@link io.devalloc.examples.ServiceLoaderExample} and
 *       {@link io.devalloc.examples.GuiceExample}: the builder API, plug-in discovery, and Guice injection, each a
 *       {@code main} runnable with a JDK 25's {@code java -cp examples/target/devalloc-launcher.jar CLASS}.</li>
 * </ul>
 *
 * <p>Everything here goes through {@code allocator-api} and finds devices by spec string; no class names an
 * adapter module's classes, so the programs work with whichever adapters are on the class path.
 */
package io.devalloc.examples;
