package io.devalloc.advisor.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The page's pieces that need no advice to check. */
class AdviceHtmlTest {

    @Test
    void aConfigurationBreaksOnlyBetweenSettingsNeverInsideABracketedValue() {
        assertEquals("expandable_segments:True,<wbr/>roundup_power2_divisions:[256:1,512:2,&gt;:8],<wbr/>"
                        + "max_split_size_mb:64",
                AdviceHtml.configHtml("expandable_segments:True,roundup_power2_divisions:[256:1,512:2,>:8],"
                        + "max_split_size_mb:64"));
        assertEquals("(defaults)", AdviceHtml.configHtml(""));
    }
}
