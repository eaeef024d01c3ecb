// The search page's own script: Sphinx's html_search_scorer (_config.yml) puts this file into
// language_data.js, which the search page alone loads, after searchtools.js: the one public
// hook that runs a script there. Two things Sphinx's search does not do for this theme:
//
// - Rank a chapter above the API page when both match only in their text: Sphinx scores
//   every such page the same ("term", 5) and then orders them by title, so "rotary" listed
//   "API reference" first, before chapter 4. A chapter's text match counts 1 more; a title or
//   an object's name still outranks it (15 and more).
// - Make each result's excerpt from the page's article only: Sphinx takes the text of the
//   page's role="main" element, which in this theme also holds the article's header (its
//   download menu ".ipynb .md .pdf", its buttons) and the page's contents list, so excerpts
//   began with "....ipynb .md .pdf ... Contents".
var Scorer = {
  score: (result) => {
    const [docname, , , , score] = result;
    return docname.startsWith("chapters/") && score === Scorer.term ? score + 1 : score;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: {0: 15, 1: 5, 2: -5},
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};

(() => {
  const toText = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    page.querySelectorAll(".bd-header-article, .bd-sidebar-secondary, .prev-next-area, .bd-footer-article")
      .forEach((el) => el.remove());
    return toText(page.documentElement.outerHTML, anchor);
  };
})();
