export { compareSourceDates, fromDateParts, parseSourceDate } from './dates.ts';
export {
  UPDATE_FORMATS,
  UpdateFormat,
  updateIdentity,
  UpdateObject,
  type ImportRow,
  type WorkUpdate,
} from './update-record.ts';
