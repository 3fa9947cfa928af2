"""WebUI prompts, in the platform's own words. Bump the version whenever a text changes."""
from __future__ import annotations

from evaluators.base import PromptSet

_TASK = (
    "You are a front-end developer rebuilding a web page from its description. The description "
    "explains what the page shows and how it reacts to the user, with screenshots of the page as "
    "first loaded and after each scripted interaction (clicks, hovering, typing, choosing an option).\n"
    "Your code is saved as three files in one folder: index.html, style.css and script.js. The page "
    "is opened from index.html in Chromium with a 1920×1080 window, so link the other two files from "
    "it by relative path (<link rel=\"stylesheet\" href=\"style.css\"> and "
    "<script src=\"script.js\"></script>). Images and other assets that the description mentions are "
    "already in that folder and load by their relative file name. Nothing outside the folder "
    "loads: no CDN, no web fonts, no network requests.\n"
    "The same interactions are then replayed on your page and compared with the original, element "
    "by element: position, size, text and style all count. Keep the ids, classes, link texts and "
    "element types the description names, because the interactions find elements by them."
)

_TAGS = (
    "Put each file in its own fenced code block whose opening fence carries exactly one of these "
    "tags: ```html for index.html, ```css for style.css, ```javascript for script.js. The tags are "
    "case-sensitive; any other tag (js, HTML, or none) cannot be used."
)

GLOBAL = PromptSet(
    version="webui-global-v2",
    system=_TASK,
    format_instruction=(
        "Write all the code at once. " + _TAGS + " A reply with an unsupported tag is rejected as a "
        "whole. Leave out the css or javascript block only if the page needs no such file; if the "
        "same tag appears twice, the later block replaces the earlier one."
    ),
    # The official Global request is the description followed by the format instruction, nothing else.
    first_turn="",
    next_turn="",
    regenerate=(
        "Your reply could not be used. Please answer again with the complete code in ```html, ```css "
        "and ```javascript blocks, using exactly these tags."
    ),
)

_REGENERATE_RULES = (
    "Only the part after # Regenerate is read. " + _TAGS + " Always write a file in full, never a "
    "fragment or a diff. A file you do not change may be left out: say so in a line of text and it "
    "keeps its current content."
)

#: Refinement rounds are composed as the official Online flows compose them
#: (evaluators.webui.online_variants): the code texts are templates filled with the page's current
#: files; the texts of the flows other than "natural" carry their name.
ONLINE = PromptSet(
    version="webui-online-v3",
    system=_TASK,
    format_instruction="",
    first_turn="",
    next_turn="",
    regenerate=(
        "Your reply could not be used. Please answer again with # Analyze and # Regenerate, and put "
        "every file you change in a ```html, ```css or ```javascript block."
    ),
    extra={
        "code_html": "Your page so far. index.html:\n```html\n{html}\n```\n\n",
        "code_css": "style.css:\n```css\n{css}\n```\n\n",
        "code_javascript": "script.js:\n```javascript\n{javascript}\n```\n\n",
        "refine": (
            "Above: a screenshot of your page as it renders now at 1920×1080. Compare it with the screenshots "
            "in the description and improve the code. Reply in exactly this format:\n\n"
            "# Analyze\n<how your page differs from the screenshots in the description, and which code has "
            "to change and why>\n\n"
            "# Regenerate\n<the full new content of every file you change>\n" + _REGENERATE_RULES
        ),
        # Without the step-by-step analysis: the model goes straight to the new code.
        "nocot_refine": (
            "Above: a screenshot of your page as it renders now at 1920×1080. Improve the code so the page "
            "matches the description. Reply with # Analyze and a few words, then # Regenerate and the new "
            "code.\n" + _REGENERATE_RULES
        ),
        # No screenshot: the model checks its own code against the description.
        "noimg_refine": (
            "Above: your page's code as it is now; no screenshot of it is shown. Read the code against the "
            "description and improve it. Reply in exactly this format:\n\n"
            "# Analyze\n<which parts of the description the code does not meet yet, and which code has to "
            "change and why>\n\n"
            "# Regenerate\n<the full new content of every file you change>\n" + _REGENERATE_RULES
        ),
        # No description: the rules of their own, and one picture of the target over the current page.
        "mergenodes_system": (
            "You are a front-end developer rebuilding a web page so that it looks like a target screenshot. "
            "Your code is saved as index.html, style.css and script.js in one folder and opened from "
            "index.html in Chromium. Each round you get your current code and one picture: the target page "
            "on top, your page as it renders now below it. Change the code so the two look the same."
        ),
        "mergenodes_refine": (
            "Above: one picture, the target page on top and your page as it renders now at the bottom. "
            "Reply in exactly this format:\n\n"
            "# Analyze\n<how the bottom page differs from the top one, and which code has to change and "
            "why>\n\n"
            "# Regenerate\n<the full new content of every file you change>\n" + _REGENERATE_RULES
        ),
        "no_code": "There is no code yet: write all of the page's code.",
        "continuation": "Your reply stopped inside a code block. Continue exactly where it stopped, "
                        "without repeating anything.",
    },
)
