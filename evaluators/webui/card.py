"""The WebUI metric card shown on the site: AES, its parts, the lost-score breakdown and deviations."""
from __future__ import annotations

METRIC_CARD: dict[str, object] = {
    "formula": "AES = Σ_states S / Σ_states W,   S = Σ_t w_t · score_t,   w_t = area_t^0.8987",
    "terms": [
        ("states", "the page as loaded (origin), then the page after each scripted action of actions.py, in order, "
                   "without reloading; in a later state only target elements whose outerHTML changed are scored"),
        ("atomic elements", "every displayed descendant of <body> with a box larger than 0.1 px²; target elements "
                            "need a data-filter-by annotation and are scored on their data-evalby properties"),
        ("matching", "s(t, g) = GIoU(t, g) + filter(t, g) − 1e-5 · descendants(g); cost = −s when s ≥ −1, else 1e5; "
                     "Hungarian assignment (scipy); pairs with cost ≤ 1 match"),
        ("score_t", "Σ over data-evalby entries of mean(sim · α) + 46 · P, divided by the sum of the weights; "
                    "P = 0.5 + 0.5 · I / min(area_t, area_g) when the boxes overlap, else (GIoU + 1) / 2"),
        ("similarities", "px: 1 − |y − x| / x (0 beyond a 100% error); colour: mean over R, G, B of "
                         "max(1 − |Δ| / 256, 0); text: exact match under 10 words, else word-set Jaccard; "
                         "choice properties: equality"),
        ("failed action", "an action that raises on the generated page scores that state 0 with its weight kept"),
    ],
    "facts": [
        "Pages render in headless Chromium (Debian's) at 1920×1080 from file URLs; dialogs are accepted.",
        "Target and generated pages run in separate browser contexts (separate storage).",
        "The official actions.py files run unchanged through a Selenium-compatible layer over Playwright; "
        "a call outside the layer fails with a message naming it.",
        "Generated pages are untrusted: only files of their own folder load, navigation away is blocked, "
        "scripts are time-limited.",
    ],
    "parsers": [
        ("Global", "the reply is split on ``` fences; every odd segment is a code block whose first line is its tag; "
                   "only html, css and javascript are accepted (case-sensitive) — any other tag makes the reply "
                   "unusable, as in the official code; no block at all is a parse error."),
        ("Online", "only the text after '# Regenerate' is read; blocks tagged html/css/javascript are taken as such, "
                   "untagged ones are classified by the official guessing rules; a reply cut inside a block is "
                   "continued once."),
    ],
    "breakdown": [
        ("parse", "no usable code block: the whole score is lost to parsing"),
        ("render", "the generated page failed to load or threw while loading: all its loss outside failed actions"),
        ("interaction", "a scripted action failed on the generated page: that state's weight is lost"),
        ("unmatched", "target elements with no generated counterpart"),
        ("attribute", "matched elements whose properties or position differ"),
    ],
    "quirks": [
        "border-top-width is read from border-left-width (official bug, kept).",
        "The has_text filter always passes (official bug: splitting an empty string gives one part).",
        "A target element assigned only to a penalised pair (cost 1e5) drops out of numerator and denominator.",
        "placeholder and value are compared on the elements' text, not on the attributes.",
        "src and type are read as computed CSS values, which are empty for every element, so they always agree.",
        "border-bottom is never expanded (the official code spells it border-down), so it contributes nothing.",
        "box-shadow with an rgba colour, or 'none' on either side, cannot be computed and is skipped.",
        "A negative px target divides by a signed value, as officially (similarity can exceed 1).",
        "Global code blocks: runs of newlines collapse to one everywhere, code included; a tag with trailing "
        "spaces is rejected; Online guessed blocks lose len('```' + kind) characters from their start.",
    ],
    "browser": [
        "Element lookups never wait (Selenium's implicit wait 0); a click on a covered element retries for up "
        "to 1 s like chromedriver, then fails.",
        "send_keys follows chromedriver: colour inputs get their value set directly; range and date inputs "
        "receive real keystrokes (a date typed as '001990-05-02' depends on the field order of Chromium's "
        "locale); clear() empties, fires change and blurs; submit() uses Selenium 4's JavaScript form submit.",
        "Pointer moves take 250 ms (Selenium's default); move_by_offset starts from the tracked pointer; "
        "move_to_element_with_offset measures from the element's centre (Selenium 4).",
        "Scrollbars take space as in headless Chrome; colours are read as rgba(r, g, b, a) like Selenium.",
        "Displayed elements follow Selenium's is_displayed rules (display, visibility, opacity, clipping).",
        "A page that hangs is stopped after 15 s of work per action (its own sleeps excluded); later "
        "actions are recorded as not run.",
        "Resources from outside the page folder (CDN fonts, scripts, fetches) never load, on target pages too; "
        "blocked addresses are listed with each attempt.",
    ],
    "deviations": [
        "Drag and drop follows Chromium's real HTML5 drag events as Playwright produces them; chromedriver "
        "is reported to produce no drop events, so two official pages can end in a different state.",
        "Online: round 0 is a Global generation; every refinement round is scored and the attempt's score is the "
        "last round's AES (the official runner leaves the aggregation to the reader).",
        "Parse retries (parse_retries > 0, a labelled non-default option) ask the model to regenerate a reply "
        "without usable code; the default 0 is the official single generation.",
    ],
}
