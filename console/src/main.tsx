import { render } from 'preact';
import { hostBase } from './api.js';
import { App } from './app.js';

const root = document.getElementById('app');
if (root === null) throw new Error('the console page has no #app element');
render(<App base={hostBase(location)} />, root);
