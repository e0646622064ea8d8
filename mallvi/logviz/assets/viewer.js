// Clicking a timeline bar seeks the run's video to the frame recorded nearest that bar's start.
window.dash_clientside = Object.assign({}, window.dash_clientside, {
  mallvi: {
    seekVideo: function (click, times) {
      const video = document.getElementById("run-video");
      const point = click && click.points && click.points[0];
      if (!video || !times || !point || !Array.isArray(point.customdata)) {
        return window.dash_clientside.no_update;
      }
      const t = point.customdata[1];
      const frames = times.t || [];
      let lo = 0, hi = frames.length - 1;
      while (lo < hi) {  // the first frame at or after t
        const mid = (lo + hi) >> 1;
        if (frames[mid] < t) { lo = mid + 1; } else { hi = mid; }
      }
      const seconds = Math.max(0, lo) / times.fps;
      video.currentTime = seconds;
      return seconds;
    },
  },
});
