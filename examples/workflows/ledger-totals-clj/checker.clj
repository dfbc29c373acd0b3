;; Grades /out/answer.edn against the world's gold {:expected {:rows n :total x}}.
(ns ledger-totals.checker
  (:require [clojure.edn :as edn]))

(defn- field [answer k]
  ;; builtin:reference writes the expected map with string keys
  (get answer k (get answer (name k))))

(defn check [{:keys [files gold]}]
  (let [text (get files "/out/answer.edn")
        answer (try (when text (edn/read-string text)) (catch Exception _ nil))
        ok (map? answer)
        {:keys [rows total]} (:expected gold)
        answered-total (when ok (field answer :total))
        checks {:answered ok
                :rows (and ok (= (field answer :rows) rows))
                :total (and (number? answered-total)
                            (= (Math/round (* answered-total 100)) (Math/round (* total 100))))}]
    {:checks checks
     :reward (/ (+ (if (:rows checks) 1 0) (if (:total checks) 2 0)) 3)}))
