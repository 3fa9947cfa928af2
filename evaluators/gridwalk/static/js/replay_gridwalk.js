// GridWalk's replay panel (evaluators/gridwalk/templates/gridwalk/replay.html): the level as a grid of
// squares, with the start, the goal, the walls and the squares of the walk numbered by their first visit.
(function () {
  "use strict";
  const source = document.getElementById("gridwalk-walk");
  const board = document.getElementById("gridwalk-board");
  if (!source || !board) return;
  let walk;
  try {
    walk = JSON.parse(source.textContent);
  } catch (error) {
    return;
  }
  if (!walk || !Array.isArray(walk.grid) || !walk.grid.length) return;

  // A square visited twice keeps its first number: the walk's order is what the panel tells.
  const firstVisit = new Map();
  (walk.path || []).forEach((cell, index) => {
    const name = cell[0] + "," + cell[1];
    if (!firstVisit.has(name)) firstVisit.set(name, index);
  });
  const last = (walk.path || [])[(walk.path || []).length - 1];

  board.style.gridTemplateColumns = "repeat(" + walk.grid[0].length + ", var(--gridwalk-square))";
  walk.grid.forEach((row, r) => {
    Array.from(row).forEach((char, c) => {
      const square = document.createElement("span");
      const name = r + "," + c;
      square.className = "gridwalk-square";
      if (char === "#") square.classList.add("wall");
      if (char === "@") square.classList.add("start");
      if (char === "G") square.classList.add("goal");
      if (firstVisit.has(name)) {
        square.classList.add("visited");
        square.textContent = String(firstVisit.get(name));
      }
      if (last && last[0] === r && last[1] === c) square.classList.add("end");
      board.appendChild(square);
    });
  });
})();
