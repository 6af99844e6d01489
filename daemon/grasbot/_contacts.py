"""E-mail addresses and phone numbers as people write them: the question log redacts a
visitor's (`store.redaction`), and an answer gives only those its notes hold (`answer.addresses`).
Each is anchored so that it never starts inside a run of digits or letters."""

from __future__ import annotations

import re
from functools import cached_property
from typing import Any

SPACE = "[ \u00a0\u202f]"  # French typography groups digits with (narrow) no-break spaces
DOT = "[ \u00a0\u202f.-]"

# With @ (spaced or not), or as written to dodge spam robots: « jean (at) gmail.com », « jean
# arobase gmail.com ». The last label holds a letter, as every top-level domain does: « rdv @
# 10.30 » is a time. The part before @ may be quoted (`"jean"@gmail.com`), as RFC 5322 allows.
# A host followed by a colon and a path is git's SSH address (« git@github.com:moi/depot.git »).
_LOCAL = r"(?<![\w.%+-])(?:[\w.%+-]{1,64}|\"[^\"\s@]{1,62}\")"
_DOMAIN = r"[^\W_](?:[\w-]{0,62})(?:\.[\w-]{1,63})*\.(?=[\w-]{0,62}[^\W\d_])[\w-]{1,63}(?![\w-]|\.[\w-]|:[\w~/.-])"
#: The top-level domains a name is read as a host by: every one of IANA's root zone written in
#: ASCII (https://data.iana.org/TLD/tlds-alpha-by-domain.txt, version 2026112100), RFC 2606's
#: `example` too; a generic one any registrant may buy (`.app`, `.link`, `.click`, `.zip`) as a
#: country's. A new one delegated later is a host only once added here (an internationalised one,
#: `.рф`, `.xn--p1ai`, is read apart: `answer.addresses._IDN_HOST`). A country's that is a file's common extension too (`.md`, `.py`, `.sh`,
#: `.pl`, C++'s `.cc`, Illustrator's `.ai`, Qt's `.pro`, CUDA's `.cu`) is in `FILE_EXTENSIONS`,
#: and so is a generic one (Java's `.properties`, SSH's `id_rsa.pub`, `sshd.pid`, Graphviz's
#: `.dot`, a source map's `.map`): « README.md », « install.sh », « main.cc » are files.
TLDS = frozenset(
    (
        "aaa aarp abb abbott abbvie abc able abogado abudhabi ac academy accenture accountant accountants aco actor ad ads adult ae aeg aero aetna af"
        " afl africa ag agakhan agency ai aig airbus airforce airtel akdn al alibaba alipay allfinanz allstate ally alsace alstom am amazon"
        " americanexpress americanfamily amex amfam amica amsterdam analytics android anquan anz ao aol apartments app apple aq aquarelle ar arab"
        " aramco archi army arpa art arte as asda asia associates at athleta attorney au auction audi audible audio auspost author auto autos aw aws"
        " ax axa az azure ba baby baidu banamex band bank bar barcelona barclaycard barclays barefoot bargains baseball basketball bauhaus bayern bb"
        " bbc bbt bbva bcg bcn bd be beats beauty beer berlin best bestbuy bet bf bg bh bharti bi bible bid bike bing bingo bio biz bj black"
        " blackfriday blockbuster blog bloomberg blue bm bms bmw bn bnpparibas bo boats boehringer bofa bom bond boo book booking bosch bostik boston"
        " bot boutique box br bradesco bridgestone broadway broker brother brussels bs bt build builders business buy buzz bv bw by bz bzh ca cab cafe"
        " cal call calvinklein cam camera camp canon capetown capital capitalone car caravan cards care career careers cars casa case cash casino cat"
        " catering catholic cba cbn cbre cc cd center ceo cern cf cfa cfd cg ch chanel channel charity chase chat cheap chintai christmas chrome"
        " church ci cipriani circle cisco citadel citi citic city ck cl claims cleaning click clinic clinique clothing cloud club clubmed cm cn co"
        " coach codes coffee college cologne com commbank community company compare computer comsec condos construction consulting contact contractors"
        " cooking cool coop corsica country coupon coupons courses cpa cr credit creditcard creditunion cricket crown crs cruise cruises cu cuisinella"
        " cv cw cx cy cymru cyou cz dad dance data date dating datsun day dclk dds de deal dealer deals degree delivery dell deloitte delta democrat"
        " dental dentist desi design dev dhl diamonds diet digital direct directory discount discover dish diy dj dk dm dnp do docs doctor dog domains"
        " dot download drive dtv dubai dupont durban dvag dvr dz earth eat ec eco edeka edu education ee eg email emerck energy engineer engineering"
        " enterprises epson equipment er ericsson erni es esq estate et eu eurovision eus events exchange expert exposed express extraspace fage fail"
        " fairwinds faith family fan fans farm farmers fashion fast fedex feedback ferrari ferrero fi fidelity fido film final finance financial fire"
        " firestone firmdale fish fishing fit fitness fj fk flickr flights flir florist flowers fly fm fo foo food football ford forex forsale forum"
        " foundation fox fr free fresenius frl frogans frontier ftr fujitsu fun fund furniture futbol fyi ga gal gallery gallo gallup game games gap"
        " garden gay gb gbiz gd gdn ge gea gent genting george gf gg ggee gh gi gift gifts gives giving gl glass gle global globo gm gmail gmbh gmo"
        " gmx gn godaddy gold goldpoint golf goodyear goog google gop got gov gp gq gr grainger graphics gratis green gripe grocery group gs gt gu"
        " gucci guge guide guitars guru gw gy hair hamburg hangout haus hbo hdfc hdfcbank health healthcare help here hermes hiphop hisamitsu hitachi"
        " hiv hk hkt hm hn hockey holdings holiday homedepot homegoods homes homesense honda horse hospital host hosting hot hotels hotmail house how"
        " hr hsbc ht hu hughes hyatt hyundai ibm icbc ice icu id ie ieee ifm ikano il im imamat imdb immo immobilien in inc industries infiniti info"
        " ing ink institute insurance insure int international intuit investments io ipiranga iq ir irish is ismaili ist istanbul it itau itv jaguar"
        " java jcb je jeep jetzt jewelry jio jll jm jmp jnj jo jobs joburg jot joy jp jpmorgan jprs juegos kaufen kddi ke kerryhotels kerryproperties"
        " kfh kg kh ki kia kids kim kindle kitchen kiwi km kn koeln komatsu kosher kp kpmg kpn kr krd kred kuokgroup kw ky kyoto kz la lacaixa"
        " lamborghini lamer land landrover lanxess lasalle lat latino latrobe law lawyer lb lc lds lease leclerc lefrak legal lego lexus lgbt li lidl"
        " life lifeinsurance lifestyle lighting like lilly limited limo lincoln link live living lk llc llp loan loans locker locus lol london lotte"
        " lotto love lpl lplfinancial lr ls lt ltd ltda lu lundbeck luxe luxury lv ly ma madrid maif maison makeup man management mango map market"
        " marketing markets marriott marshalls mattel mba mc mckinsey md me med media meet melbourne meme memorial men menu merck merckmsd mg mh miami"
        " microsoft mil mini mint mit mitsubishi mk ml mlb mls mm mma mn mo mobi mobile moda moe moi mom monash money monster mormon mortgage moscow"
        " moto motorcycles mov movie mp mq mr ms msd mt mtn mtr mu museum music mv mw mx my mz na nab nagoya name navy nba nc ne nec net netbank"
        " netflix network neustar new news next nextdirect nexus nf nfl ng ngo nhk ni nico nike nikon ninja nissan nissay nl no nokia norton now"
        " nowruz nowtv np nr nra nrw ntt nu nyc nz obi observer office okinawa olayan olayangroup ollo om omega one ong onl online ooo open oracle"
        " orange org organic origins osaka otsuka ott ovh pa page panasonic paris pars partners parts party pay pccw pe pet pf pfizer pg ph pharmacy"
        " phd philips phone photo photography photos physio pics pictet pictures pid pin ping pink pioneer pizza pk pl place play playstation plumbing"
        " plus pm pn pnc pohl poker politie porn post pr praxi press prime pro prod productions prof progressive promo properties property protection"
        " pru prudential ps pt pub pw pwc py qa qpon quebec quest racing radio re read realestate realtor realty recipes red redumbrella rehab reise"
        " reisen reit reliance ren rent rentals repair report republican rest restaurant review reviews rexroth rich richardli ricoh ril rio rip ro"
        " rocks rodeo rogers room rs rsvp ru rugby ruhr run rw rwe ryukyu sa saarland safe safety sakura sale salon samsclub samsung sandvik"
        " sandvikcoromant sanofi sap sarl sas save saxo sb sbi sbs sc scb schaeffler schmidt scholarships school schule schwarz science scot sd se"
        " search seat secure security seek select sener services seven sew sex sexy sfr sg sh shangrila sharp shell shia shiksha shoes shop shopping"
        " shouji show si silk sina singles site sj sk ski skin sky skype sl sling sm smart smile sn sncf so soccer social softbank software sohu solar"
        " solutions song sony soy spa space sport spot sr srl ss st stada staples star statebank statefarm stc stcgroup stockholm storage store stream"
        " studio study style su sucks supplies supply support surf surgery suzuki sv swatch swiss sx sy sydney systems sz tab taipei talk taobao"
        " target tatamotors tatar tattoo tax taxi tc tci td tdk team tech technology tel temasek tennis teva tf tg th thd theater theatre tiaa tickets"
        " tienda tips tires tirol tj tjmaxx tjx tk tkmaxx tl tm tmall tn to today tokyo tools top toray toshiba total tours town toyota toys tr trade"
        " trading training travel travelers travelersinsurance trust trv tt tube tui tunes tushu tv tvs tw tz ua ubank ubs ug uk unicom university uno"
        " uol ups us uy uz va vacations vana vanguard vc ve vegas ventures verisign versicherung vet vg vi viajes video vig viking villas vin vip"
        " virgin visa vision viva vivo vlaanderen vn vodka volvo vote voting voto voyage vu wales walmart walter wang wanggou watch watches weather"
        " weatherchannel web webcam weber website wed wedding weibo weir wf whoswho wien wiki williamhill win windows wine winners wme woodside work"
        " works world wow ws wtc wtf xbox xerox xin xxx xyz yachts yahoo yamaxun yandex ye yodobashi yoga yokohama you youtube yt yun za zappos zara"
        " zero zip zm zone zuerich zw example"
    ).split()
)
FILE_EXTENSIONS = frozenset(
    "md py sh rs pl pm ps so mo in am ac mk ml tf zip mov cc mm ai gd cl ly sv nu re sc cr tk gs as st pro cu"
    " properties java coffee ninja pub pid dot map".split()
)
#: A top-level domain that code names an attribute by far more often than a site is (`user.id`,
#: Django's `obj.pk`, pandas' `df.at[0]`, `args.lr`, matplotlib's `self.ax`, `np.int`,
#: `request.user.email`, `user.name`, `response.data`, `el.style`, `event.target`, `Date.now`,
#: `request.POST`, Ruby's `User.new`, `plotly.express`), or a name is (« jean.dupont »): read as
#: code, not as a host, after a name without a hyphen, which no identifier holds (« evil-login.events »
#: is a site: `answer.addresses`). Each is a brand's, or one few sites are in.
CODE_ATTRIBUTES = frozenset(
    "id pk at lr ax int email name data style search post total now new target save events date day open read call play next zero chrome express dupont".split()
)
#: A top-level domain that code or a product's name writes with a capital after a name
#: (`System.Net`, .NET's `ASP.NET`, `System.IO`, `Socket.IO`, Kotlin's `Dispatchers.IO`,
#: `logging.INFO`, Android's `Gravity.TOP`, `Mode.DEV`, `Vuex.Store`, Unity's `KeyCode.Space`,
#: `System.Security`, `Google.Cloud`, `System.Web`, `System.Windows`, `Microsoft.Office`,
#: `Windows.Storage`, `UnityEngine.Audio`, `Task.Run`, `Vector3.One`, `DateTime.Today`,
#: `Alignment.Center`, Java's `Color.RED`): so written, without a hyphen or a path, it is no host.
CODE_NAMES = frozenset(
    "net io info top dev store space security cloud web windows office azure media audio video storage management graphics run one today center"
    " red blue green black pink orange".split()
)
#: A name code reads an attribute of, never a site's (`self.training`, `this.page`, `el.click`,
#: Express's `req.host`): what follows it is code, whatever its last name.
CODE_RECEIVERS = frozenset("self this cls super window document event el obj req res request response ctx args kwargs props state".split())


def one_of(words: frozenset[str]) -> str:
    """A pattern that matches any of `words` (the longest first, as an alternation sorted so),
    written as a tree of their letters: « co », « com », « coop » are `co(?:m|op)?`. The regex
    engine tries each word of an alternation in turn; 1,285 top-level domains made it slow."""
    tree: dict = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    return _branches(tree)


def _branches(node: dict) -> str:
    branches = [re.escape(char) + _branches(rest) for char, rest in sorted(node.items()) if char]
    if not branches:
        return ""
    either = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
    return f"(?:{either})?" if "" in node else either


class LazyPattern:
    """A regular expression compiled at its first use, not at import: the patterns that hold
    every top-level domain took 60 ms to compile, on a daemon's path to listening, for the
    first answer or question logged to use. Read as the `re.Pattern` it stands for."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.pattern, self.flags)

    def __getattr__(self, name: str) -> Any:  # finditer, search, sub…
        if name.startswith("__"):  # copy and pickle look for `__setstate__` before `pattern` is set
            raise AttributeError(name)
        return getattr(self.compiled, name)


_TLD = one_of(TLDS)
#: Any of TLDS, as a pattern (what `store.redaction` reads addresses by too).
TLD = _TLD
# « exemple [dot] fr », « evil point com »: a dot spelled out, after an @ spelled or not
_SPELLED_DOT = r"(?:\s?[(\[]dot[)\]]\s?|\s(?:point|dot)\s)"
_SPELLED_DOMAIN = rf"[^\W_][\w-]{{0,62}}(?:(?:\.|{_SPELLED_DOT})[\w-]{{1,63}}){{0,4}}?{_SPELLED_DOT}(?:{_TLD})(?![\w-]|\.[\w-])"
_AT = r"(?:\s?@\s?|\s?[(\[]at[)\]]\s?|\sarobase\s)"
EMAIL = LazyPattern(rf"{_LOCAL}{_AT}(?:{_DOMAIN}|{_SPELLED_DOMAIN})", re.IGNORECASE)
#: An e-mail address spaced or spelled out as an answer reads one (« jean @ evil.fr », « jean
#: arobase evil point com »): its domain ends in a known top-level domain, for code spaces an @
#: too: « x @ self.weight » is Python's product of matrices, « avec @functools.cache » a
#: decorator. `local@domain` is `MAILBOX`'s, whatever its domain.
SPELLED_EMAIL = LazyPattern(
    rf"{_LOCAL}{_AT}[^\W_][\w-]{{0,62}}(?:(?:\.|{_SPELLED_DOT})[\w-]{{1,63}}){{0,4}}?(?:\.|{_SPELLED_DOT})(?:{_TLD})(?![\w-]|\.[\w-])",
    re.IGNORECASE,
)


def mailbox(written: str) -> str:
    """An e-mail address written to dodge spam robots (« jean arobase exemple point fr ») as a
    mail client reads it (`jean@exemple.fr`)."""
    return re.sub(rf"\s*{_AT}\s*", "@", re.sub(rf"\s*{_SPELLED_DOT}\s*", ".", written, flags=re.IGNORECASE), flags=re.IGNORECASE)


#: An e-mail address as a mail client or a link reads one: `local@domain`, no space in it.
MAILBOX = re.compile(rf"{_LOCAL}@{_DOMAIN}", re.IGNORECASE)
# French: ten digits from 0 in pairs (spaces, dots, dashes or none). International: + or 00
# (« 00 33 », as a French visitor dials from abroad), the country's code (or « (+33) », as French
# sites print it), an optional (0) or (area), then 6 to 13 digits: in one run, or in groups of
# two or more after the first (« +33 6 12 34 56 78 », « +1 555 123-4567 »); digits one by one
# are a version (« +1.2.3.4.5.6.7 »). No national number begins with 00, the international
# prefix: « +20 00 12 34 56 » is a temperature and a time.
PHONE = re.compile(
    rf"(?<![\w+])(?<!\d{SPACE})(?<!\d[.-])"
    rf"(?:0[1-9](?:{DOT}?\d{{2}}){{4}}"
    rf"|(?:\(\+{SPACE}?[1-9]\d{{0,2}}\)|(?:\+|00){SPACE}?[1-9]\d{{0,2}})(?:{DOT}?\(\d{{1,4}}\))?{DOT}?(?!0{DOT}?0)"
    rf"(?=(?:{DOT}?\d){{6,13}}(?!{DOT}?\d))(?:\d+|\d{{1,4}}(?:{DOT}\d{{2,}})+))"
    rf"(?!{DOT}?\d)"
)
