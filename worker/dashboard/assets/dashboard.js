// The dashboard's only script: copy buttons, the live job list, and HLS players (hls.js).
// Pages work without it; it adds what needs a browser. No framework, no build step.

const REFRESH_MS = 3000;

function setUpCopyButtons() {
  for (const button of document.querySelectorAll("[data-copy]")) {
    button.addEventListener("click", async () => {
      const source = document.querySelector(button.dataset.copy);
      if (!source) return;
      try {
        await navigator.clipboard.writeText(source.textContent);
        button.textContent = "Copied";
      } catch {
        // No clipboard access (an insecure origin, a denied permission): select it for Ctrl-C instead.
        const range = document.createRange();
        range.selectNodeContents(source);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        button.textContent = "Selected: press Ctrl-C";
      }
    });
  }
}

/** Plays `data-hls-src` with hls.js (or natively in Safari); a thumbnail loads one fragment of the lowest level. */
function attachHls(video) {
  if (video.dataset.attached) return;
  video.dataset.attached = "true";
  const src = video.dataset.hlsSrc;
  const thumbnail = video.dataset.thumbnail === "true";
  if (window.Hls?.isSupported()) {
    // No worker: the page's Content-Security-Policy allows scripts from this origin only.
    const hls = new window.Hls({
      enableWorker: false,
      startLevel: thumbnail ? 0 : -1,
      maxBufferLength: thumbnail ? 2 : 30,
    });
    hls.on(window.Hls.Events.ERROR, (_event, data) => {
      if (data.fatal) video.dataset.error = data.details;
    });
    if (thumbnail) hls.once(window.Hls.Events.FRAG_BUFFERED, () => hls.stopLoad());
    hls.on(window.Hls.Events.MANIFEST_PARSED, (_event, data) => {
      video.dataset.levels = String(data.levels.length);
    });
    hls.loadSource(src);
    hls.attachMedia(video);
    video.hls = hls;
  } else if (video.canPlayType("application/vnd.apple.mpegurl")) {
    video.src = src;
  }
}

const attachPlayers = (root) => root.querySelectorAll("video[data-hls-src]").forEach(attachHls);

/**
 * Puts the fresh list in place, keeping every row whose job did not change (its player keeps
 * playing, its thumbnail is not fetched again); the players of rows that went are stopped.
 */
function applyJobs(box, fresh) {
  const kept = new Map([...box.querySelectorAll("tr[data-job-id]")].map((row) => [row.dataset.jobId, row]));
  for (const row of fresh.querySelectorAll("tr[data-job-id]")) {
    const old = kept.get(row.dataset.jobId);
    if (old && old.textContent === row.textContent && old.dataset.status === row.dataset.status) {
      row.replaceWith(old);
      kept.delete(row.dataset.jobId);
    }
  }
  for (const gone of kept.values()) {
    for (const video of gone.querySelectorAll("video")) video.hls?.destroy();
  }
  box.replaceWith(fresh);
  attachPlayers(document);
}

/** While a listed job is queued or processing, the list is fetched again every few seconds. */
function refreshJobs() {
  const box = document.getElementById("jobs");
  if (box?.dataset.active !== "true") return;
  setTimeout(async () => {
    try {
      const res = await fetch(box.dataset.refresh, { credentials: "same-origin", headers: { Accept: "text/html" } });
      // Redirected means the session ended: the page itself will say so.
      if (res.redirected) return location.reload();
      if (res.ok) {
        const template = document.createElement("template");
        template.innerHTML = await res.text();
        applyJobs(box, template.content.firstElementChild);
      }
    } catch {
      // Offline for a moment: try again at the next tick.
    }
    refreshJobs();
  }, REFRESH_MS);
}

/** A job page follows its job until it settles. */
function refreshJob() {
  const job = document.getElementById("job");
  if (job && job.dataset.active === "true") setTimeout(() => location.reload(), REFRESH_MS);
}

setUpCopyButtons();
attachPlayers(document);
refreshJobs();
refreshJob();
