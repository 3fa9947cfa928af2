"""The WebUI metric card shown on the site: AES, its parts, the lost-score breakdown and deviations."""
from __future__ import annotations

from evaluators.webui.online_variants import NATURAL, VARIANTS

METRIC_CARD: dict[str, object] = {
    "formula": "AES = Σ_states S / Σ_states W,   S = Σ_t w_t · score_t,   w_t = area_t^0.8987",
    "terms": [
        ("states", "the page as loaded (origin), then the page after each scripted action of actions.py, in order, "
                   "without reloading; every target element is scored in every state (the official code means to "
                   "leave out elements an action did not change, but its test never succeeds: see the variants)"),
        ("atomic elements", "every displayed descendant of <body> whose box has w · h > 0.1 px²; target elements "
                            "need a data-filter-by annotation and are scored on their data-evalby properties"),
        ("boxes", "as Selenium's element.rect reads them from chromedriver: (x, y, x + w, y + h) with x, y the "
                  "bounding box's corner plus the page scroll, unrounded, and w, h the layout size "
                  "(offsetWidth/offsetHeight: whole pixels, transforms ignored; the bounding box's size for SVG "
                  "elements and for elements whose layout size is 0 × 0); area_t = w · h"),
        ("matching", "s(t, g) = GIoU(t, g) + filter(t, g) − 1e-5 · descendants(g); cost = −s when s ≥ −1, else 1e5; "
                     "Hungarian assignment (scipy); pairs with cost ≤ 1 match"),
        ("score_t", "Σ over data-evalby entries of mean(sim · α) + 46 · P, divided by the sum of the weights; "
                    "P = 0.5 + 0.5 · I / min(area_t, area_g) when the boxes overlap, else (GIoU + 1) / 2"),
        ("similarities", "px: 1 − |y − x| / x (0 beyond a 100% error); colour: mean over R, G, B of "
                         "max(1 − |Δ| / 256, 0); text: exact match under 10 words, else word-set Jaccard; "
                         "choice properties: equality"),
        ("failed action", "an action that raises on the generated page scores that state 0 with its weight kept"),
    ],
    "normalisation": (
        "Floor 0 (a page with nothing on it matches no element: AES 0 %); ceiling 100 (a page identical "
        "to its target in every state). The summary's score is therefore the AES % itself."),
    "facts": [
        "Pages render in headless Chromium (Debian's) from file URLs in a 1920×937 viewport by default; dialogs "
        "are accepted. The official evaluator asks Selenium for a 1920×1080 window, of which today's headless "
        "Chromium (Chrome 132 on) gives the page 1920×937 (measured with chromedriver 156), and it scores there. "
        "Under the headless mode that --headless selected at the paper's time (Chrome before 132) the window was "
        "the viewport, so the paper's numbers were measured at 1920×1080: offered as the labelled variant "
        "webui_viewport_1080=true (see the variants).",
        "Measuring never changes the page: reading a state and taking its screenshot write nothing to the DOM or "
        "the styles (screenshots keep the caret as it is instead of hiding it with an inline style), so every "
        "fixture page scores identically with and without screenshots (tested on the perfect copy and a degraded "
        "reply, under both the official rule and the variant).",
        "Every page is run once at import (its actions on the target, and a perfect copy from another folder); "
        "pages that cannot be evaluated as intended (a target action fails, zero total weight, missing or blocked "
        "files, url() values compared, a copy below 100) are flagged, and each board says how many of its pages "
        "are.",
        "Checked against the official evaluator as shipped, run locally (Selenium 4.51, chromedriver 156, the same "
        "Chromium; its 1920×1080 window gives the page 1920×937) on every fixture page with a degraded reply (all "
        "styles removed; bench/webui_official_aes.py): faq-accordion 32.60, login-form-validation 35.70, pricing "
        "plans 32.73, profile-tabs 41.56, star-rating 39.32, step-counter 34.22, theme-switcher 59.36, 任务清单 "
        "29.29; the same in both to the second decimal. At the paper-era 1920×1080 (the variant) 5 of the 8 "
        "differ: star-rating scores 34.32 where the official evaluator gives 39.32.",
        "Target and generated pages run in separate browser contexts (separate storage).",
        "The official actions.py files run unchanged through a Selenium-compatible layer over Playwright; "
        "a call outside the layer fails with a message naming it.",
        "Generated pages are untrusted: only files of their own folder load, navigation away is blocked, "
        "scripts are time-limited.",
    ],
    "parsers": [
        ("Global", "as the official code: runs of newlines collapse to one, the reply is split on ``` fences, every "
                   "odd segment is a code block whose first line (after stripping the segment) is its tag; only "
                   "html, css and javascript are accepted (case-sensitive). Any other tag (js, HTML, a missing tag) "
                   "makes the official action constructor assert and the run fail: here the attempt scores 0 as the "
                   "model's parse error, the recorded call naming the tag. No block at all, or no html block, leaves "
                   "no index.html: 0 (see the deviations)."),
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
        "url()-valued properties (background-image) are compared as computed values, i.e. absolute file URLs, so a "
        "perfect copy rendered from another folder (as every attempt is) never equals the target there, and a "
        "background-image filter fails. The import's page check lists the targets concerned; among the fixture "
        "pages it finds none (no fixture target is compared on a url() value).",
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
        "The official waits (300 ms after the load event, every time.sleep of actions.py, pointer-move durations) "
        "pass on the browser's virtual clock: timers, animation frames, Date, performance.now, CSS animations and "
        "transitions move by exactly the time waited, without the wall-clock wait; loading runs in real time, "
        "clicks and typing happen while the clock stands still. Every fixture page gives the same states and "
        "scores as in real time (tested on the perfect copy, the degraded reply and a reply with renamed ids); "
        "webui_real_time=true (a setting, not a variant) waits in real time instead.",
        "Timers on the virtual clock run when Chromium 156 runs them (measured): a zero or missing delay runs at "
        "once, with no 1 ms minimum; the 7th timer of a chain set from timer callbacks and an interval's 7th run "
        "on wait at least 4 ms; an interval that falls behind while the page loads skips the runs it missed; at "
        "most 100 callbacks run in one millisecond of page time. So setInterval(changeTime) without a delay, "
        "which Playwright's own clock ran again and again at one instant until the load watchdog stopped the "
        "page, ticks every 4 ms as in a real browser (a clock page built that way loads at once and scores the "
        "same on both clocks, its perfect copy 100; tested). A timer callback that throws is an uncaught page "
        "error, as in a browser, and time goes on (Playwright's clock stopped the page's time there).",
        "A page the virtual clock cannot run as real time would falls back to the real clock: one that waits for "
        "its clock in a busy loop (a million reads while it stands still), one whose timers keep its time more "
        "than 2 s behind the wall clock at less than half its pace during a wait (a real browser would skip "
        "interval runs), one that breaks the clock. The page is then rendered again from the start on the real "
        "clock and so is the other page of the evaluation, so that target and generated page always run on the "
        "same kind of clock; the attempt's details record it (clock, clock_fallback: which page and why) and its "
        "replay says \"Both pages ran on the real clock because …\". A page that really hangs (an endless loop) "
        "is no reason to fall back: it is stopped by the watchdog as on either clock.",
        "Pointer moves take 250 ms (Selenium's default); move_by_offset starts from the tracked pointer; "
        "move_to_element_with_offset measures from the element's centre (Selenium 4).",
        "Scrollbars take space as in headless Chrome; colours are read as rgba(r, g, b, a) like Selenium.",
        "Displayed elements follow Selenium's is_displayed rules (display, visibility, opacity, clipping).",
        "A page that hangs is stopped after 15 s of work per action (its own sleeps excluded, and a sleep's "
        "timers count as work); later "
        "actions are recorded as not run.",
        "Resources from outside the page folder (CDN fonts, scripts, fetches) never load, on target pages too; "
        "blocked addresses are listed with each attempt.",
    ],
    "variants": [
        "webui_exclude_unchanged=true (a submission setting, off by default; such entries are labelled variants, "
        "never ranked) leaves out, in each state after the first, target elements whose outerHTML the action did "
        "not change, as the official code intends. Measured on the 8 fixture pages at the default viewport "
        "(bench/webui_fidelity.py): a perfect copy scores 100 either way; a degraded reply (all styles removed) "
        "38.10 official vs 39.45 with the variant on average, per page from −2.17 (faq-accordion 32.60 → 30.43) to "
        "+6.39 (任务清单 29.29 → 35.68); a reply whose ids are renamed, so that scripted actions fail, 43.32 vs "
        "61.12 on average, up to +35.42 (profile-tabs 47.24 → 82.66): failed states keep the weight of every "
        "element officially.",
        "webui_viewport_1080=true (a submission setting, off by default; a labelled variant) renders the target "
        "and the generated page in a 1920×1080 viewport, the whole of the official 1920×1080 window as the headless "
        "mode of the paper's time gave it and as the paper's numbers were measured; the default 1920×937 is what "
        "the official evaluator renders today. WebUI submissions stored while 1920×1080 was the platform's default "
        "carry this setting, so they keep their scores and are shown as this variant. Measured on the 8 fixture "
        "pages (bench/webui_viewport.py): a perfect copy scores 100 at both heights; a degraded reply (all styles "
        "removed) 38.10 at 937 vs 37.25 at 1080 on average, per page from −4.99 (star-rating 39.32 → 34.32) to "
        "+0.24 (theme-switcher 59.36 → 59.61), unchanged on faq-accordion, profile-tabs and 任务清单: positions "
        "and what fits above the fold move with the height.",
        *(f"webui_online_flow={variant.name} (Online; the official --webui_online_type {variant.official}"
          + (", the default" if variant.name == NATURAL else "; a labelled variant") + f"): {variant.summary}."
          for variant in VARIANTS.values()),
        "Each webui_online_flow sends its own official flow's texts, read from the suite's official checkout like "
        "Natural's (the platform's own wording without one); bench/official_requests.py plays every one against "
        "the official runner and compares the requests one for one. A board with a page whose description has no "
        "image right after its opening text refuses webui_online_flow=mergenodes when submitted, naming the pages: "
        "the official flow stops there before its first request.",
    ],
    "deviations": [
        "No index.html (a reply without code, or with only css/javascript blocks): the official run loads the "
        "missing file anyway and scores the browser's own 'file not found' page, whose elements match some targets "
        "(a small non-zero score that depends on the browser build: 0.50 to 12.36 on 8 fixture pages with the "
        "official evaluator and Chromium 156, bench/webui_official_aes.py); here such an attempt scores 0, lost "
        "to parsing, because a score earned by the browser's error page measures nothing about the model.",
        "Box sizes used to come from getBoundingClientRect (fractional, transforms included); they are now "
        "chromedriver's layout sizes. On the fixture pages the two differ by 0.02 points at most for every "
        "reply measured (bench/webui_fidelity.py); pages with fractional or transformed layouts move more.",
        "chromedriver's element.rect briefly restyles an element with display:none to measure it, leaving "
        "style=\"\" (or a reserialised style attribute) on it in both pages at every state; nothing is written "
        "here. Only a page whose CSS or script reacts to a style attribute's presence could score differently.",
        "The official reads are one WebDriver round trip per element and property, spread over seconds while the "
        "page keeps running; here each state is read in one pass, the first 300 ms after the load event.",
        "A scripted action that fails on the target aborts the official evaluation, and main.py then scores the "
        "run 0 after regenerating up to 3 times; here the attempt is an environment failure, not scored, and the "
        "page is flagged at import (none of the fixture pages is).",
        "A rejected tag: the official main.py runs the whole flow again (a fresh sample of the same prompt) up to 3 "
        "times before scoring 0; here the attempt scores 0 at once unless parse_retries > 0 is set (which asks "
        "again within the conversation). A tag t is also accepted officially when the page has a scripted action "
        "named write_t (it then runs that action instead of writing a file); here it is rejected.",
        "A page without actions.py (Hoodie3) is scored on its initial state; the official environment cannot start "
        "on it.",
        "Fonts are Debian's: text measured in another font changes box sizes and so positions and weights.",
        "Drag and drop follows Chromium's real HTML5 drag events as Playwright produces them; chromedriver "
        "is reported to produce no drop events, so two official pages can end in a different state.",
        "Online: round 0 is a Global generation (officially a separate Global run the Online runner starts from); "
        "every refinement round is composed as the run's official Online flow composes it (Natural: the rules, "
        "the whole description without an image limit, then the current files, a screenshot of the page and the "
        "refinement text; see webui_online_flow among the variants), is scored, and the attempt's score is the "
        "last round's AES (the official runner leaves the aggregation to the reader).",
        "Online: a refinement round whose reply holds no code block keeps the page's files and scores them again; "
        "the official runner evaluates each round in a fresh folder that only that round's code is written to, "
        "so such a round scores the browser's 'file not found' page (12.36 on step-counter in "
        "bench/official_requests.py's run). Only an attempt whose last round writes no code scores differently.",
        "A description image link to a PNG the page folder does not hold (or one outside it) is sent as its link "
        "text; the official environment cannot open it and its run stops. Links to other files are sent as text, "
        "as officially.",
        "Parse retries (parse_retries > 0, a labelled non-default option) ask the model to regenerate a reply "
        "without usable code; the default 0 is the official single generation.",
    ],
}
