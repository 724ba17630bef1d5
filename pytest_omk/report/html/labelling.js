(() => {
  "use strict";
  const items = Array.from(document.querySelectorAll("section.item"));
  const ids = items.map((el) => JSON.parse(el.dataset.id));
  const scores = new Map();
  let current = 0;
  // A YAML double-quoted scalar that any YAML reader loads as the same text: JSON's escapes, with
  // every character past ASCII escaped too (YAML 1.1 readers fold U+2028 and refuse C1 controls).
  const quoted = (value) =>
    JSON.stringify(value).replace(/[\u007f-\u{10ffff}]/gu, (c) => {
      const code = c.codePointAt(0);
      return code > 0xffff ? "\\U" + code.toString(16).padStart(8, "0") : "\\u" + code.toString(16).padStart(4, "0");
    });
  const update = () => {
    const lines = ["annotations:"];
    items.forEach((el, i) => {
      if (!scores.has(i)) return;
      lines.push("  - sample_id: " + quoted(ids[i]), "    score: " + scores.get(i));
      const reason = el.querySelector("textarea").value.trim();
      if (reason) lines.push("    reason: " + quoted(reason));
    });
    document.getElementById("yaml").value = (lines.length > 1 ? lines.join("\n") : "annotations: []") + "\n";
    document.getElementById("count").textContent = scores.size + " of " + items.length + " labelled";
  };
  const select = (i) => {
    if (!items.length) return;
    current = Math.max(0, Math.min(items.length - 1, i));
    items.forEach((el, k) => el.classList.toggle("current", k === current));
    items[current].scrollIntoView({ block: "nearest" });
  };
  const score = (i, value) => {
    scores.set(i, value);
    items[i].querySelectorAll("button.score").forEach((b) => b.classList.toggle("chosen", Number(b.dataset.score) === value));
    update();
  };
  items.forEach((el, i) => {
    el.addEventListener("click", () => select(i));
    el.querySelectorAll("button.score").forEach((b) => b.addEventListener("click", () => score(i, Number(b.dataset.score))));
    el.querySelector("textarea").addEventListener("input", update);
  });
  document.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLTextAreaElement || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key >= "1" && event.key <= "5") score(current, Number(event.key));
    else if (event.key === "j" || event.key === "ArrowDown") select(current + 1);
    else if (event.key === "k" || event.key === "ArrowUp") select(current - 1);
    else return;
    event.preventDefault();
  });
  select(0);
  update();
})();
