// The submit page's "Test the endpoint" button, in place: the form goes to the page as without
// script (the same checks, the same service), the answer names the test call, and the call's result
// is read from the API until a worker has finished it. Without script the button posts the page,
// which links to the call's own page; the fields typed (the API key included) stay as they were here.
(function () {
  "use strict";
  const panel = document.getElementById("endpoint-check");
  if (!panel) return;
  const body = panel.querySelector(".endpoint-check-body");
  const form = panel.closest("form");

  function show(lines) {
    panel.hidden = false;
    const list = document.createElement("dl");
    list.className = "endpoint-check-result";
    lines.forEach(([term, text, pre]) => {
      const dt = document.createElement("dt");
      dt.textContent = term;
      const dd = document.createElement("dd");
      const inner = pre ? document.createElement("pre") : dd;
      inner.textContent = text;
      if (pre) dd.appendChild(inner);
      list.append(dt, dd);
    });
    body.replaceChildren(list);
  }

  function resultLines(check) {
    const r = check.result || {};
    const lines = [["Test call", "#" + check.id + " (" + check.env + " " + check.flow +
                    (r.scenario ? ", first request of " + r.scenario : "") + ")"]];
    lines.push(["Reachable", r.reachable ? "yes" : r.reachable === false ? "no" : "unknown"]);
    if (r.model) {
      let model = r.model;
      if (r.listed_models && r.listed_models.length) model += " (first of /models: " + r.listed_models.join(", ") + ")";
      if (r.answer_model && r.answer_model !== r.model) model += "; the answer names " + r.answer_model;
      lines.push(["Model", model]);
    }
    if (r.error) {
      const status = r.error.status != null ? " (HTTP " + r.error.status + ")" : "";
      lines.push(["Error", r.error.kind + status + ": " + r.error.message]);
      if (r.fix) lines.push(["Fix", "set " + r.fix + " in the request settings"]);
    } else {
      lines.push(["Latency", r.latency_seconds != null ? r.latency_seconds.toFixed(2) + " s" : "?"]);
      lines.push(["Tokens", (r.prompt_tokens ?? "?") + " prompt, " + (r.completion_tokens ?? "?") + " completion"]);
      lines.push(["Finish reason", r.finish_reason || "not given"]);
      if (r.refusal) lines.push(["Refusal", r.refusal]);
      lines.push(["Reply", r.reply || "(empty)", true]);
      if (r.parse_error) lines.push(["Parse error", r.parse_error]);
      if (r.actions && r.actions.length) lines.push(["Parsed actions", r.actions.join(" ")]);
    }
    lines.push(["Verdict", r.ok ? "ok: the reply parsed into valid actions" : "not ok: no valid action"]);
    return lines;
  }

  function poll(url) {
    fetch(url, {headers: {Accept: "application/json"}, credentials: "same-origin"})
      .then((response) => response.json())
      .then((check) => {
        if (check.status === "finished") {
          show(resultLines(check));
          panel.dataset.state = "finished";
          return;
        }
        show([["Test call", "#" + check.id + " " + check.status + ": a worker makes the request…"]]);
        setTimeout(() => poll(url), 1000);
      })
      .catch(() => setTimeout(() => poll(url), 2000));
  }

  if (panel.dataset.poll) poll(panel.dataset.poll);
  if (!form) return;
  form.addEventListener("submit", (event) => {
    const button = event.submitter;
    if (!button || button.name !== "test_endpoint") return;
    event.preventDefault();
    const data = new FormData(form);
    data.append("test_endpoint", "1");
    panel.dataset.state = "sending";
    show([["Test call", "sending…"]]);
    fetch(form.action || window.location.pathname, {
      method: "POST", body: data, credentials: "same-origin", headers: {Accept: "application/json"},
    })
      .then((response) => response.json().then((answer) => [response.status, answer]))
      .then(([status, answer]) => {
        if (status === 202) {
          poll(answer.poll);
        } else {
          panel.dataset.state = "refused";
          show([["Refused", answer.message || "the test call was refused"]]);
        }
      })
      .catch(() => show([["Refused", "the site could not be reached"]]));
  });
})();
