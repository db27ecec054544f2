/// The pages' style and their one script, shipped inside the program (no framework, nothing
/// fetched from elsewhere: the Content-Security-Policy allows only this origin).
public enum Assets {
    public static let css = """
        *{box-sizing:border-box}
        html{-webkit-text-size-adjust:100%}
        body{margin:0;font:17px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1b;background:#fbf7ee}
        header{background:#2b3a42;color:#fff;padding:.5rem 1rem}
        .brand{margin:0;font-weight:700}
        nav{display:flex;flex-wrap:wrap;gap:.25rem .9rem;margin-top:.3rem}
        nav a{color:#ffe7a3;text-decoration:none;padding:.35rem 0;min-height:44px;display:inline-flex;align-items:center}
        nav a[aria-current=page]{color:#fff;text-decoration:underline}
        main{max-width:60rem;margin:0 auto;padding:1rem;overflow-wrap:anywhere}
        h1{font-size:1.5rem;margin:.2rem 0 1rem}
        h2{font-size:1.15rem}
        label{display:block;margin:.6rem 0 .2rem;font-weight:600}
        input,select,textarea{width:100%;font:inherit;padding:.55rem;border:1px solid #8a8577;border-radius:6px;background:#fff;min-height:44px}
        textarea{resize:vertical}
        button{font:inherit;padding:.6rem 1rem;border-radius:6px;border:1px solid #2b3a42;background:#fff;color:#2b3a42;min-height:44px;margin:.4rem .4rem .4rem 0;cursor:pointer}
        button.main{background:#2b3a42;color:#fff}
        button.quiet{border-color:#8a8577;color:#55524a}
        button:disabled{opacity:.5}
        .row{display:flex;flex-wrap:wrap;align-items:center}
        fieldset{border:1px solid #cfc7b3;border-radius:8px;margin:0 0 1rem;padding:.5rem .9rem .8rem;background:#fff}
        legend{font-weight:700;padding:0 .3rem}
        ul#checks{list-style:none;padding:0}
        li.check{padding:.6rem .7rem;margin:.4rem 0;border-radius:6px;background:#fff;border-left:6px solid #3c8d40;overflow-wrap:anywhere}
        li.check.warning{border-left-color:#c98a00}
        li.check.problem{border-left-color:#b3261e}
        .status{font-weight:700;text-transform:uppercase;font-size:.8rem}
        .fix{color:#55524a}
        .problem{color:#b3261e}
        #result{padding:.6rem .8rem;border-radius:6px;margin-bottom:1rem;background:#fff;border-left:6px solid #3c8d40}
        #result.problem{border-left-color:#b3261e}
        .note{background:#fff;padding:.5rem .8rem;border-radius:6px}
        code{font-size:.85em;overflow-wrap:anywhere}
        table{border-collapse:collapse;width:100%}
        th,td{text-align:left;padding:.4rem;border-bottom:1px solid #e3dccb;vertical-align:top}
        td form{margin:0}
        td label{font-weight:400}
        @media (max-width:640px){
          thead{display:none}
          table,tbody,tr,td{display:block;width:100%}
          tr.tag{background:#fff;border-radius:8px;margin:.6rem 0;padding:.3rem .6rem;border:1px solid #e3dccb}
          td{border:0;padding:.2rem 0}
          td.name{font-weight:700;font-size:1.1rem}
        }
        """

    /// Live views: the tags and the hunt from `/events` (Server-Sent Events); the pages work
    /// without it.
    public static let js = """
        "use strict";
        (function () {
          if (!window.EventSource) return;
          var tags = document.querySelector("#tags tbody");
          var hunt = document.getElementById("hunt-live");
          if (!tags && !hunt) return;
          var source = new EventSource("/events");
          if (tags) source.addEventListener("tags", function (e) {
            var data = JSON.parse(e.data);
            var active = document.activeElement;
            if (active && tags.contains(active)) return; // never under a parent's typing
            tags.innerHTML = data.rows;
          });
          if (hunt) source.addEventListener("hunt", function (e) {
            hunt.innerHTML = JSON.parse(e.data).html;
          });
        })();
        """
}
