// Last, once every part is defined: the page for this URL.

document.getElementById("home").setAttribute("href", url("/"));
const match = /^\/runs\/([0-9a-z]+)$/.exec(location.pathname);
if (match) runPage(match[1]);
else runsPage();
