// The submit and upload forms offer only the flows the chosen environment has: the environment
// select carries each environment's flows (from its plug-in) in data-flows. The server refuses any
// other pair as well, so without this script a wrong pair is explained after sending.
(function () {
  "use strict";
  document.querySelectorAll("select[name=env][data-flows]").forEach((envSelect) => {
    const form = envSelect.form;
    const flowSelect = form && form.querySelector("select[name=flow]");
    if (!flowSelect) return;
    let flows;
    try {
      flows = JSON.parse(envSelect.dataset.flows);
    } catch (e) {
      return;
    }
    const note = document.createElement("small");
    note.className = "flow-note";
    flowSelect.insertAdjacentElement("afterend", note);

    function update() {
      const allowed = flows[envSelect.value] || [];
      const options = Array.from(flowSelect.options);
      options.forEach((option) => {
        const off = allowed.indexOf(option.value) < 0;
        option.disabled = off;
        option.hidden = off;
      });
      if (flowSelect.selectedOptions.length === 0 || flowSelect.selectedOptions[0].disabled) {
        const first = options.find((option) => !option.disabled);
        if (first) flowSelect.value = first.value;
      }
      const title = envSelect.selectedOptions.length ? envSelect.selectedOptions[0].textContent : "";
      note.textContent = allowed.length === 1 ? `${title} has the ${flowSelect.selectedOptions[0].textContent} flow only.` : "";
    }

    envSelect.addEventListener("change", update);
    update();
  });
})();
