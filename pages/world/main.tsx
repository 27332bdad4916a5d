/** The world page: served at the world's own origin (`GET /`), the first thing a person sees of a world. */
import '../ui/base.css';
import './app.css';
import { startPage } from '../ui/index.js';
import { WorldPage } from './app.js';

startPage((page) => <WorldPage {...page} />);
