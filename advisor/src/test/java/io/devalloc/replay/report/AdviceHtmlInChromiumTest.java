package io.devalloc.replay.report;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.devalloc.advisor.Advice;
import io.devalloc.advisor.Advisor;
import io.devalloc.advisor.AdvisorTrace;
import io.devalloc.advisor.JobAdvice;
import io.devalloc.advisor.Objective;
import io.devalloc.advisor.report.AdviceHtml;
import io.devalloc.replay.ReplayProgress;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The advisor's page in headless Chromium (the replay report's {@link Chromium} helper, hence this package): it
 * parses with every section, and its screenshot is not blank. Skipped when no {@code chromium} is on the PATH.
 */
class AdviceHtmlInChromiumTest {

    @TempDir
    Path dir;

    @Test
    void thePageRendersWithEverySection() throws Exception {
        Optional<Chromium> chromium = Chromium.onPath();
        assumeTrue(chromium.isPresent(), "no chromium on the PATH: the page is not checked in a browser");
        Path grid = Files.write(dir.resolve("grid.txt"), List.of("defaults", "expandable_segments:True"));
        Advice advice = new Advisor().advise(
                AdvisorTrace.read(Path.of("..", "traces", "pt-opt-zeroth-order-fl", "memory.csv")),
                new Advisor.Options("caching", grid.toString(), -1, Objective.CAPACITY, 2), ReplayProgress.NONE);
        Path html = dir.resolve("advice.html");
        AdviceHtml.write(html, JobAdvice.of(advice));

        String dom = chromium.get().dumpDom(html, dir.resolve("dom"));
        for (String id : List.of("recommendation", "trust", "ranking", "timeline", "segments", "waste")) {
            assertTrue(dom.contains("id=\"d0-" + id + "\""), "section " + id + " in the parsed page");
        }
        assertTrue(dom.contains("<svg"), "the chart and maps are drawn");

        Path png = dir.resolve("advice.png");
        chromium.get().screenshot(html, png, 1280, 1600, dir.resolve("shot"));
        BufferedImage image = ImageIO.read(png.toFile());
        int first = image.getRGB(0, 0);
        boolean varied = false;
        for (int y = 0; y < image.getHeight() && !varied; y += 7) {
            for (int x = 0; x < image.getWidth() && !varied; x += 7) {
                varied = image.getRGB(x, y) != first;
            }
        }
        assertTrue(varied, "the screenshot is not blank");
    }
}
