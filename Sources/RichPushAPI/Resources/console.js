// The RichPush console's only script: live numbers on the overview (server-sent events,
// paused while the tab is hidden) and "select all" on the dead letters page. Every page works
// without it; it writes text only (textContent), never markup.
"use strict";

function cell(row, text, header) {
  const element = document.createElement(header ? "th" : "td");
  if (header) element.scope = "row";
  element.textContent = String(text);
  row.appendChild(element);
}

function age(ms) {
  if (ms < 1) return "-";
  if (ms < 1000) return ms + " ms";
  if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
  if (ms < 3600000) return Math.floor(ms / 60000) + " min";
  return (ms / 3600000).toFixed(1) + " h";
}

function rate(rates, name) {
  return rates ? Number(rates[name]).toFixed(1) : "-";
}

// The fastest 3 reasons with their rates, the rest summed, as the server writes the cell.
function failures(rates) {
  if (!rates) return "-";
  const perSecond = rates.failedByReason || {};
  const ranked = Object.keys(perSecond).map(function (code) { return [code, Number(perSecond[code])]; })
    .sort(function (a, b) { return a[1] !== b[1] ? b[1] - a[1] : (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0); });
  if (ranked.length === 0) return "none";
  const parts = ranked.slice(0, 3).map(function (entry) { return entry[0] + " " + entry[1].toFixed(1); });
  const rest = ranked.slice(3);
  if (rest.length > 0) parts.push("+" + rest.length + " more " + rest.reduce(function (sum, entry) { return sum + entry[1]; }, 0).toFixed(1));
  return parts.join(", ");
}

function fill(tbody, items, columns, empty) {
  const rows = items.map(function (item) {
    const row = document.createElement("tr");
    columns.forEach(function (column, index) { cell(row, column(item), index === 0); });
    return row;
  });
  if (rows.length === 0) {
    const row = document.createElement("tr");
    row.className = "empty";
    const td = document.createElement("td");
    td.colSpan = columns.length;
    td.textContent = empty;
    row.appendChild(td);
    rows.push(row);
  }
  tbody.replaceChildren.apply(tbody, rows);
}

function live() {
  const apps = document.querySelector("#apps tbody");
  const workers = document.querySelector("#workers tbody");
  const status = document.getElementById("live");
  if (!apps || !workers || !window.EventSource) return;
  let source = null;
  function open() {
    if (source) return;
    source = new EventSource("/console/events");
    source.addEventListener("overview", function (event) {
      const data = JSON.parse(event.data);
      fill(apps, data.apps, [
        function (a) { return a.app + (a.paused ? " · paused" : ""); }, function (a) { return a.waiting; }, function (a) { return age(a.oldestWaitingMs); },
        function (a) { return a.inFlight; }, function (a) { return a.done; }, function (a) { return a.scheduled; },
        function (a) { return a.retrying; }, function (a) { return a.dead; },
        function (a) { return rate(a.rates, "sent"); }, function (a) { return rate(a.rates, "done"); }, function (a) { return rate(a.rates, "retried"); },
        function (a) { return rate(a.rates, "deadLettered"); }, function (a) { return failures(a.rates); }], "No app has work waiting, in flight, scheduled, retrying or dead.");
      fill(workers, data.workers, [
        function (w) { return w.name; }, function (w) { return w.pending; }, function (w) { return w.processed; },
        function (w) { return age(w.idleMs) + " ago"; }], "No worker has joined the queue.");
      if (data.totals) {
        Object.keys(data.totals).forEach(function (name) {
          const element = document.querySelector('[data-total="' + name + '"]');
          if (!element) return;
          const target = element.querySelector("a") || element;
          target.textContent = String(data.totals[name]);
        });
      }
      status.textContent = "Live: updated " + new Date().toLocaleTimeString();
      document.body.dataset.updates = String(Number(document.body.dataset.updates || "0") + 1);
    });
    source.addEventListener("unavailable", function () { status.textContent = "Live: the store is unavailable; retrying."; });
    source.onerror = function () {
      // A refused stream (signed out, or the server's live streams all taken) is not retried.
      status.textContent = source && source.readyState === EventSource.CLOSED
        ? "Live updates stopped; reload the page to try again." : "Live: reconnecting…";
    };
  }
  function close() {
    if (!source) return;
    source.close();
    source = null;
    status.textContent = "Live updates paused while the tab is hidden.";
  }
  document.addEventListener("visibilitychange", function () { if (document.hidden) close(); else open(); });
  if (!document.hidden) open();
}

function selectAll() {
  const all = document.getElementById("select-all");
  if (!all) return;
  all.addEventListener("change", function () {
    document.querySelectorAll('input[name="id"][form="selected"]').forEach(function (box) { box.checked = all.checked; });
  });
}

document.addEventListener("DOMContentLoaded", function () { live(); selectAll(); });
