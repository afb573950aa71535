package io.devalloc.advisor;

import java.util.List;
import java.util.Objects;

/**
 * The settings the advisor sweeps, as data: a named built-in grid (an allocator provider's
 * {@link io.devalloc.api.spi.AllocatorProvider#defaultGrid(long)}) or a file of configuration texts
 * ({@link Grids#read}).
 *
 * @param name     the grid's name as reports show it: {@code default (caching)} or the file's path
 * @param entries  the settings that the allocator accepts, in order, each once
 * @param problems the settings it refused or that were given twice, each as {@code file:line: message}, in order;
 *                 they are reported and left out, and the other settings still run
 */
public record Grid(String name, List<GridEntry> entries, List<String> problems) {

    public Grid {
        Objects.requireNonNull(name, "name");
        entries = List.copyOf(entries);
        problems = List.copyOf(problems);
    }
}
