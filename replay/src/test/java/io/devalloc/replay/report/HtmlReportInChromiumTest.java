package io.devalloc.replay.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.devalloc.api.snapshot.BlockState;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.TrainingLoopWorkload;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The report in a real browser: Debian's {@code chromium}, headless. Chromium parses the page (the DOM it dumps
 * holds every chart, map and table row, and no element made from a hostile name), and its screenshot shows the
 * page: many colours, among them every allocator's colour and the block states'.
 *
 * <p>Skipped, with the reason, where {@code chromium} is not on the PATH. With the system property
 * {@code devalloc.report.screenshot} set to a path, it also writes a picture there: the sample report of the real
 * allocators on the synthetic training loop ({@link SampleResults}), under 300 KB. The picture
 * {@code docs/compare-report.png} is made with
 * <pre>{@code
 * ./mvnw -o -q -B -pl replay -am verify -Dtest=HtmlReportInChromiumTest -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Ddevalloc.report.screenshot=$PWD/docs/compare-report.png
 * }</pre>
 */
class HtmlReportInChromiumTest {

    private static final int WIDTH = 1400;
    private static final int HEIGHT = 1800;
    private static final long README_PICTURE_MAX_BYTES = 300 * 1024;

    private static Chromium chromium;

    /** Assumed before each test rather than once, so that every skipped test is reported with the reason. */
    @BeforeEach
    void findChromium() {
        Optional<Chromium> found = Chromium.onPath();
        assumeTrue(found.isPresent(), "chromium is not on the PATH, so the HTML report is not checked in a real"
                + " browser; install Debian's chromium package (apt-get install chromium) to run this check");
        chromium = found.get();
    }

    @Test
    void chromiumParsesThePageAndShowsItsChartsTableAndMaps(@TempDir Path dir) throws Exception {
        // The three allocators on one trace: chart, table and the first segment maps fit in the window.
        List<ReplayResult> results = SyntheticResults.threeAllocatorsAndAWarmTrace().subList(0, 3);
        String html = HtmlReport.render("devalloc compare", results);
        Path page = dir.resolve("report.html");
        HtmlReport.write(page, "devalloc compare", results);

        String dom = chromium.dumpDom(page, dir.resolve("dom"));
        assertTrue(dom.contains("<title>devalloc compare</title>"), "the parsed page has its title");
        for (String element : List.of("<svg", "<polyline", "<circle", "<rect", "<table", "<tr class=\"result\"",
                "<tr class=\"trace-row\"", "<figure class=\"chart\"", "<div class=\"map\"")) {
            assertEquals(count(html, element), count(dom, element), element + " in the DOM chromium built");
        }
        assertEquals(3, count(dom, "<tr class=\"result\""));
        assertEquals(4, count(dom, "<svg class="), "a chart and 3 segment maps");
        assertTrue(count(dom, "<title>") > 100, "hover titles");

        Path png = dir.resolve("report.png");
        chromium.screenshot(page, png, WIDTH, HEIGHT, dir.resolve("shot"));
        assertTrue(Files.size(png) > 40_000,
                "a screenshot of " + Files.size(png) + " bytes is too small to show the page");
        BufferedImage image = ImageIO.read(png.toFile());
        assertEquals(WIDTH, image.getWidth());
        assertEquals(HEIGHT, image.getHeight());

        Set<Integer> colours = new HashSet<>();
        long nonWhite = 0;
        for (int y = 0; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                int rgb = image.getRGB(x, y) & 0xffffff;
                colours.add(rgb);
                if (rgb != 0xffffff) {
                    nonWhite++;
                }
            }
        }
        assertTrue(colours.size() >= 200, colours.size() + " distinct colours");
        double inked = (double) nonWhite / (image.getWidth() * image.getHeight());
        assertTrue(inked > 0.08 && inked < 0.9, "share of non-white pixels: " + inked);

        // Each allocator's colour: its swatches (14 × 14 px, several of them) and its lines in the chart. Blue
        // (direct) is the least visible, its line lying under the others at times; it still covers over 1,000 px.
        for (String colour : List.of("#1f77b4", "#d62728", "#2ca02c")) {
            long n = pixelsNear(image, colour, 24);
            assertTrue(n > 1_000, colour + ": " + n + " pixels");
        }
        // Block states in the segment maps (the first maps are within the window).
        for (BlockState state : List.of(BlockState.ALLOCATED, BlockState.FREE)) {
            long n = pixelsNear(image, SegmentMap.stateColour(state), 8);
            assertTrue(n > 5_000, state + ": " + n + " pixels");
        }
        // The best marks' green background.
        assertTrue(pixelsNear(image, "#e3f4e6", 2) > 2_000, "best marks");
    }

    @Test
    void hostileNamesAreTextInTheBrowserToo(@TempDir Path dir) throws Exception {
        Path page = dir.resolve("hostile.html");
        HtmlReport.write(page, "report </title><script>alert(4)</script>", List.of(HtmlReportTest.hostile()));
        String dom = chromium.dumpDom(page, dir.resolve("dom"));
        Set<String> elements = new HashSet<>();
        Set<String> attributes = new HashSet<>();
        tags(dom, elements, attributes);
        assertTrue(elements.containsAll(Set.of("html", "table", "svg", "rect", "title")), elements.toString());
        for (String forbidden : List.of("script", "img")) {
            assertFalse(elements.contains(forbidden), "a " + forbidden + " element in the DOM");
        }
        assertFalse(dom.contains("<b>"), "a b element made from the allocator's name");
        assertTrue(attributes.stream().noneMatch(a -> a.startsWith("on") || a.equals("src") || a.equals("href")),
                attributes.toString());
        assertTrue(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "the conf as text");
        assertTrue(dom.contains("<title>report &lt;/title&gt;&lt;script&gt;alert(4)&lt;/script&gt;</title>"),
                "the title as text");
    }

    @Test
    void theSampleOfTheRealAllocatorsRendersAndMakesTheReadmePicture(@TempDir Path dir) throws Exception {
        List<ReplayResult> sample = SampleResults.trainingLoop(TrainingLoopWorkload.Spec.defaults());
        String title = "devalloc compare: " + sample.get(0).trace();
        Path page = dir.resolve("sample.html");
        HtmlReport.write(page, title, sample);
        String dom = chromium.dumpDom(page, dir.resolve("dom"));
        assertEquals(sample.size(), count(dom, "<tr class=\"result\""));
        assertEquals(1 + sample.size(), count(dom, "<svg class="), "1 chart and a segment map per result");

        String target = System.getProperty("devalloc.report.screenshot", "");
        Path png = target.isBlank() ? dir.resolve("sample.png") : Path.of(target).toAbsolutePath();
        Files.createDirectories(png.getParent());
        double scale = readmePicture(page, png, dir.resolve("shot"));
        assertTrue(Files.size(png) <= README_PICTURE_MAX_BYTES, Files.size(png) + " bytes");
        BufferedImage image = ImageIO.read(png.toFile());
        assertEquals(Math.round(WIDTH * scale), image.getWidth());
        for (int i = 0; i < sample.size(); i++) {
            // At least the swatches of each set-up (legend, table and map heading).
            String colour = Series.PALETTE.get(i);
            long n = pixelsNear(image, colour, 24);
            assertTrue(n > 300 * scale * scale, colour + ": " + n + " pixels");
        }
    }

    /**
     * Writes the whole page to {@code png} as the README shows it: a screenshot of a window taller than the page,
     * cut below the last thing on it, rendered at the largest of 100%, 90%, 80%, ... that keeps the file within
     * {@value #README_PICTURE_MAX_BYTES} bytes (the browser draws the text at that size, no resampling).
     *
     * @return the scale used
     */
    static double readmePicture(Path page, Path png, Path work) throws IOException, InterruptedException {
        for (int percent = 100; percent >= 60; percent -= 10) {
            double scale = percent / 100.0;
            Path shot = work.resolve("page-" + percent + ".png");
            chromium.screenshot(page, shot, WIDTH, 3_000, scale, work);
            BufferedImage image = ImageIO.read(shot.toFile());
            int bottom = image.getHeight();
            while (bottom > 1 && isWhiteRow(image, bottom - 1)) {
                bottom--;
            }
            int height = Math.min(image.getHeight(), bottom + (int) Math.round(24 * scale));
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            ImageIO.write(image.getSubimage(0, 0, image.getWidth(), height), "png", bytes);
            if (bytes.size() <= README_PICTURE_MAX_BYTES) {
                Files.write(png, bytes.toByteArray());
                return scale;
            }
        }
        throw new AssertionError("the page does not fit in " + README_PICTURE_MAX_BYTES + " bytes even at 60%");
    }

    private static boolean isWhiteRow(BufferedImage image, int y) {
        for (int x = 0; x < image.getWidth(); x++) {
            if ((image.getRGB(x, y) & 0xffffff) != 0xffffff) {
                return false;
            }
        }
        return true;
    }

    /** Pixels within {@code tolerance} of a {@code #rrggbb} colour on every channel. */
    static long pixelsNear(BufferedImage image, String colour, int tolerance) {
        int target = Integer.parseInt(colour.substring(1), 16);
        int tr = target >> 16 & 0xff;
        int tg = target >> 8 & 0xff;
        int tb = target & 0xff;
        long n = 0;
        for (int y = 0; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                int rgb = image.getRGB(x, y);
                if (Math.abs((rgb >> 16 & 0xff) - tr) <= tolerance && Math.abs((rgb >> 8 & 0xff) - tg) <= tolerance
                        && Math.abs((rgb & 0xff) - tb) <= tolerance) {
                    n++;
                }
            }
        }
        return n;
    }

    /**
     * The element and attribute names of the tags in chromium's serialized DOM, which writes every attribute
     * value in double quotes with {@code "} escaped, so a tag is a name and then name="value" pairs.
     */
    static void tags(String dom, Set<String> elements, Set<String> attributes) {
        Matcher tag = Pattern.compile("<([a-zA-Z][a-zA-Z0-9:-]*)((?:\\s+[^\\s=/>\"]+(?:=\"[^\"]*\")?)*)\\s*/?>")
                .matcher(dom);
        Pattern attribute = Pattern.compile("\\s+([^\\s=/>\"]+)(?:=\"[^\"]*\")?");
        while (tag.find()) {
            elements.add(tag.group(1).toLowerCase(Locale.ROOT));
            Matcher a = attribute.matcher(tag.group(2));
            while (a.find()) {
                attributes.add(a.group(1).toLowerCase(Locale.ROOT));
            }
        }
    }

    private static int count(String text, String needle) {
        Matcher m = Pattern.compile(Pattern.quote(needle)).matcher(text);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }
}
