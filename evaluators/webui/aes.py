"""The WebUI Atomic Element Similarity (AES) metric over a page and its interaction states (reference §2.4).

Inputs are element lists produced by the browser layer (:mod:`evaluators.webui.elements`); no
browser is involved here.

* **Element score** of a matched pair: for each ``data-evalby`` entry of the target, the mean of
  α·similarity and the mean of α over the entry's sub-properties that could be computed; these are
  summed over entries, the position term 46·P is added to the numerator and 46 to the denominator,
  and the score is numerator/denominator.
* **Element weight**: (width·height of the target) ** β, β = 0.8987018465995789.
* **State**: S = Σ weight·score over matched targets, W = Σ weight over matched and unmatched
  targets (dropped and excluded targets count in neither). When the scripted action failed on the
  generated page, S = 0 and W is the weight the target state would have against itself.
* **Page**: AES = Σ S / Σ W over the origin state and the state after each scripted action, every
  target element scored in every state. 0 when there is no weight at all.

The release means to leave out, in each state after the origin, the target elements an action did
not change: it keeps the previous state's elements in a dict keyed by Selenium's
EventFiringWebElement wrappers, which define neither ``__eq__`` nor ``__hash__``, and looks the new
state's (freshly created) wrappers up in it. The lookup never succeeds, nothing is ever left out,
and that is the official metric reproduced by default. The intended exclusion is available as the
labelled variant ``exclude_unchanged=True`` (submission setting ``webui_exclude_unchanged``).

The lost score 1 − AES splits exactly into three parts (as fractions of Σ W): *attribute* loss
(matched targets scoring below 1), *unmatched* loss (targets without a partner) and *interaction*
loss (states whose generated action failed). Failures decided before scoring (an unparseable reply,
a page that does not render) are not seen here: the caller moves a whole attempt's loss into its
own parse/render categories instead of using this breakdown.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluators.webui import weights
from evaluators.webui.elements import Element, PageState
from evaluators.webui.matching import DroppedTarget, match_elements, position_similarity, select_targets
from evaluators.webui.similarity import UnavailableProperty, property_similarity

# ---------------------------------------------------------------------------------------------
# Element score


@dataclass(frozen=True)
class PropertyRow:
    """One sub-property of one ``data-evalby`` entry.

    ``similarity`` is None when the sub-property contributed nothing (``note`` says why: ignored
    name, unknown name, shorthand with no sub-properties, or the values could not be compared).
    ``effective_weight`` is α divided by the number of computed sub-properties of the entry, so
    that Σ effective_weight·similarity + 46·P over an element's rows is its score numerator.
    """

    entry: str
    name: str
    similarity: float | None
    weight: float
    effective_weight: float
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"entry": self.entry, "name": self.name, "similarity": self.similarity,
                "weight": self.weight, "effective_weight": self.effective_weight, "note": self.note}


@dataclass(frozen=True)
class ElementScore:
    score: float
    #: The position term P (weighted by POSITION_WEIGHT in the score).
    position: float
    numerator: float
    denominator: float
    rows: list[PropertyRow]


def _entry_rows(entry: str, target: Element, generated: Element,
                official_quirks: bool | None) -> tuple[float, float, list[PropertyRow]]:
    """(mean α·similarity, mean α, rows) of one ``data-evalby`` entry; (0, 0) if nothing computed."""
    if entry in weights.IGNORED_NAMES:
        return 0.0, 0.0, [PropertyRow(entry, entry, None, 0.0, 0.0, "ignored")]
    names = weights.expand(entry, target, official_quirks)
    if not names:
        return 0.0, 0.0, [PropertyRow(entry, entry, None, 0.0, 0.0, "no linear-gradient on the target")]
    computed: list[tuple[str, float, float]] = []
    skipped: list[PropertyRow] = []
    weighted_sum = 0.0
    weight_sum = 0.0
    for name in names:
        if not weights.is_known(name):
            skipped.append(PropertyRow(entry, name, None, 0.0, 0.0, "unknown property"))
            continue
        alpha = weights.ALPHA[name]
        try:
            sim = property_similarity(name, target, generated, official_quirks=official_quirks)
        except UnavailableProperty as exc:
            skipped.append(PropertyRow(entry, name, None, alpha, 0.0, str(exc)))
            continue
        weighted_sum += sim * alpha
        weight_sum += alpha
        computed.append((name, sim, alpha))
    n = len(computed)
    rows = [PropertyRow(entry, name, sim, alpha, alpha / n) for name, sim, alpha in computed] + skipped
    if n == 0:
        return 0.0, 0.0, rows
    return weighted_sum / n, weight_sum / n, rows


def element_score(target: Element, generated: Element, *, official_quirks: bool | None = None) -> ElementScore:
    """Score in [0, 1] of a matched pair (a negative px target can push it above 1, see
    :func:`evaluators.webui.similarity.px_similarity`)."""
    numerator = 0.0
    denominator = 0.0
    rows: list[PropertyRow] = []
    for entry in target.eval_by:
        entry_sum, entry_weight, entry_rows = _entry_rows(entry, target, generated, official_quirks)
        numerator += entry_sum
        denominator += entry_weight
        rows.extend(entry_rows)
    position = position_similarity(target.box, generated.box)
    numerator += position * weights.POSITION_WEIGHT
    denominator += weights.POSITION_WEIGHT
    return ElementScore(score=numerator / denominator, position=position, numerator=numerator,
                        denominator=denominator, rows=rows)


# ---------------------------------------------------------------------------------------------
# State score


@dataclass(frozen=True)
class MatchedElement:
    target_xpath: str
    generated_xpath: str
    target_rect: tuple[float, float, float, float]
    generated_rect: tuple[float, float, float, float]
    filter_by: str
    #: s = GIoU + filter − 1e-5·descendants that the assignment used.
    match_score: float
    weight: float
    score: float
    position: float
    rows: list[PropertyRow]

    @property
    def loss(self) -> float:
        return self.weight * (1 - self.score)

    def as_dict(self) -> dict[str, Any]:
        return {"target_xpath": self.target_xpath, "generated_xpath": self.generated_xpath,
                "target_rect": list(self.target_rect), "generated_rect": list(self.generated_rect),
                "filter_by": self.filter_by, "match_score": self.match_score, "weight": self.weight,
                "score": self.score, "position": self.position,
                "position_weight": weights.POSITION_WEIGHT,
                "properties": [row.as_dict() for row in self.rows]}


@dataclass(frozen=True)
class WeightedTarget:
    """A target that counts in W without contributing to S."""

    xpath: str
    rect: tuple[float, float, float, float]
    weight: float

    def as_dict(self) -> dict[str, Any]:
        return {"xpath": self.xpath, "rect": list(self.rect), "weight": self.weight}


@dataclass(frozen=True)
class DroppedElement:
    xpath: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"xpath": self.xpath, "reason": self.reason}


@dataclass
class StateScore:
    """One page state: S (``score_sum``), W (``weight_sum``) and what made them up.

    ``matched`` and ``unmatched`` are empty when the generated action failed; ``failed_targets``
    then lists the targets whose weight makes up W.
    """

    name: str
    score_sum: float
    weight_sum: float
    action_failed: bool = False
    action_error: str | None = None
    matched: list[MatchedElement] = field(default_factory=list)
    unmatched: list[WeightedTarget] = field(default_factory=list)
    failed_targets: list[WeightedTarget] = field(default_factory=list)
    dropped: list[DroppedElement] = field(default_factory=list)
    #: xpaths of targets left out because the action did not change them.
    excluded: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return self.score_sum / self.weight_sum if self.weight_sum > 0 else 0.0

    @property
    def attribute_loss(self) -> float:
        return sum(m.loss for m in self.matched)

    @property
    def unmatched_loss(self) -> float:
        return sum(t.weight for t in self.unmatched)

    @property
    def interaction_loss(self) -> float:
        return self.weight_sum if self.action_failed else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "S": self.score_sum, "W": self.weight_sum, "score": self.score,
                "action_failed": self.action_failed, "action_error": self.action_error,
                "attribute_loss": self.attribute_loss, "unmatched_loss": self.unmatched_loss,
                "interaction_loss": self.interaction_loss,
                "matched": [m.as_dict() for m in self.matched],
                "unmatched": [t.as_dict() for t in self.unmatched],
                "failed_targets": [t.as_dict() for t in self.failed_targets],
                "dropped": [d.as_dict() for d in self.dropped],
                "excluded": list(self.excluded)}


def _weighted(element: Element) -> WeightedTarget:
    return WeightedTarget(element.xpath, element.rect, weights.element_weight(element))


def _dropped(items: Sequence[DroppedTarget]) -> list[DroppedElement]:
    return [DroppedElement(item.element.xpath, item.reason) for item in items]


def score_state(target: list[Element], generated: list[Element] | None, considered: set[str] | None = None,
                *, name: str = "", official_quirks: bool | None = None) -> StateScore:
    """Score one state.

    ``target`` and ``generated`` are all extracted elements of each page; targets are the ones with
    ``data-filter-by``. ``generated=None`` means the scripted action failed on the generated page:
    S = 0 and W is computed by matching the target against itself, as the release does.
    ``considered`` restricts scoring to targets with these xpaths (None = all), so xpaths must be
    unique within a page. Elements are expected as the browser layer extracts them: displayed, with
    an area above 0.1 px², in document order (the order decides ties in the assignment).
    """
    selection = select_targets(target, considered)
    failed = generated is None
    matching = match_elements(selection.candidates, target if generated is None else generated,
                              official_quirks=official_quirks)
    state = StateScore(name=name, score_sum=0.0, weight_sum=0.0, action_failed=failed,
                       dropped=_dropped(selection.dropped) + _dropped(matching.dropped),
                       excluded=[element.xpath for element in selection.excluded])
    # Accumulation order (matches in target order, then unmatched targets) follows the release so
    # that sums agree to the last bit.
    score_sum = 0.0
    weight_sum = 0.0
    for match in matching.matches:
        weight = weights.element_weight(match.target)
        if failed:
            state.failed_targets.append(_weighted(match.target))
        else:
            scored = element_score(match.target, match.generated, official_quirks=official_quirks)
            score_sum += scored.score * weight
            state.matched.append(MatchedElement(
                target_xpath=match.target.xpath, generated_xpath=match.generated.xpath,
                target_rect=match.target.rect, generated_rect=match.generated.rect,
                filter_by=match.target.filter_by or "", match_score=match.score, weight=weight,
                score=scored.score, position=scored.position, rows=scored.rows,
            ))
        weight_sum += weight
    for element in matching.unmatched:
        weighted = _weighted(element)
        (state.failed_targets if failed else state.unmatched).append(weighted)
        weight_sum += weighted.weight
    state.score_sum = score_sum
    state.weight_sum = weight_sum
    return state


# ---------------------------------------------------------------------------------------------
# Page score


def kept_outer_html(previous: Mapping[str, str], current: Mapping[str, str]) -> set[str]:
    """outerHTML values of elements (xpath → outerHTML maps) that an action left unchanged."""
    return {html for xpath, html in previous.items() if current.get(xpath) == html}


def dom_of(state: PageState) -> dict[str, str]:
    return {element.xpath: element.outer_html for element in state.elements}


def considered_targets(previous: Mapping[str, str], current: PageState,
                       current_dom: Mapping[str, str] | None = None) -> set[str]:
    """xpaths of the current target elements an action changed or created (the variant that
    leaves unchanged elements out; the official metric never does).

    As the release's code would if its lookup worked, an element is left out when its outerHTML
    equals that of *any* element the action left unchanged (it compares values, not identities),
    so an element identical to an unchanged one is left out too.
    """
    kept = kept_outer_html(previous, dom_of(current) if current_dom is None else current_dom)
    return {element.xpath for element in current.elements if element.outer_html not in kept}


@dataclass
class AesResult:
    states: list[StateScore]

    @property
    def score_sum(self) -> float:
        return sum(state.score_sum for state in self.states)

    @property
    def weight_sum(self) -> float:
        return sum(state.weight_sum for state in self.states)

    @property
    def aes(self) -> float:
        total = self.weight_sum
        return self.score_sum / total if total > 0 else 0.0

    def _fraction(self, amount: float) -> float:
        total = self.weight_sum
        return amount / total if total > 0 else 0.0

    @property
    def attribute_loss(self) -> float:
        return self._fraction(sum(state.attribute_loss for state in self.states))

    @property
    def unmatched_loss(self) -> float:
        return self._fraction(sum(state.unmatched_loss for state in self.states))

    @property
    def interaction_loss(self) -> float:
        return self._fraction(sum(state.interaction_loss for state in self.states))

    def as_dict(self) -> dict[str, Any]:
        """JSON-able summary. With no weight at all (no scorable target) every figure is 0 and the
        breakdown does not sum to 1; otherwise aes + the three losses = 1 up to rounding."""
        return {"aes": self.aes, "S": self.score_sum, "W": self.weight_sum,
                "breakdown": {"aes": self.aes, "attribute_loss": self.attribute_loss,
                              "unmatched_loss": self.unmatched_loss, "interaction_loss": self.interaction_loss},
                "states": [state.as_dict() for state in self.states]}


def score_page(target_states: Sequence[PageState], generated_states: Sequence[PageState], *,
               target_dom: Sequence[Mapping[str, str]] | None = None,
               official_quirks: bool | None = None, exclude_unchanged: bool = False) -> AesResult:
    """AES of a generated page against its target over the origin state and every action state.

    States are paired by position. A generated state with ``action_error`` scores S = 0 with its
    target weight kept; the target's own ``action_error`` is not inspected (the target states are
    scored as extracted).

    By default every target element counts in every state, as in the release (see the module
    docstring). ``exclude_unchanged=True`` is the corrected variant: in each state after the origin,
    target elements whose outerHTML the action did not change are left out. ``target_dom`` then
    optionally gives, per target state, xpath → outerHTML for *every* ``<body>`` descendant, hidden
    ones included, as the release's comparison would have; without it the extracted (displayed)
    elements stand in, which differs only for an element that was hidden in the previous state and
    became visible without its own outerHTML changing (left out with the full DOM, counted here).
    """
    if len(target_states) != len(generated_states):
        raise ValueError(f"{len(target_states)} target states but {len(generated_states)} generated states")
    if target_dom is not None and len(target_dom) != len(target_states):
        raise ValueError("target_dom needs one map per target state")
    doms = list(target_dom) if target_dom is not None else [dom_of(state) for state in target_states]
    states: list[StateScore] = []
    for k, (target_state, generated_state) in enumerate(zip(target_states, generated_states)):
        considered = (considered_targets(doms[k - 1], target_state, doms[k])
                      if exclude_unchanged and k > 0 else None)
        failed = generated_state.action_error is not None
        state = score_state(target_state.elements, None if failed else generated_state.elements, considered,
                            name=target_state.name, official_quirks=official_quirks)
        state.action_error = generated_state.action_error
        states.append(state)
    return AesResult(states=states)
